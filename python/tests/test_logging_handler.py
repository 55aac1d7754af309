"""HeraldHandler against a real `herald serve`."""

from __future__ import annotations

import logging
import logging.config
import socket
import time
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import pytest
from conftest import Server, closed_port_url

import herald
from herald import Priority
from herald.logging import HeraldHandler, priority_for_level
from herald.origin import process_name


@pytest.fixture
def root() -> Iterator[logging.Logger]:
    logger = logging.getLogger()
    handlers, level = list(logger.handlers), logger.level
    yield logger
    for h in list(logger.handlers):
        if isinstance(h, HeraldHandler):
            h.close()
    logger.handlers[:] = handlers
    logger.setLevel(level)


def configure(url: str) -> HeraldHandler:
    logging.config.dictConfig(
        {
            "version": 1,
            "disable_existing_loggers": False,
            "handlers": {
                "herald": {"class": "herald.logging.HeraldHandler", "url": url, "level": "INFO"}
            },
            "root": {"handlers": ["herald"], "level": "DEBUG"},
        }
    )
    (handler,) = [h for h in logging.getLogger().handlers if isinstance(h, HeraldHandler)]
    return handler


@contextmanager
def attached(
    handler: HeraldHandler, name: str, close_timeout: Optional[float] = None
) -> Iterator[logging.Logger]:
    """Logger ``name`` with ``handler`` alone (not propagating to the root); afterwards the
    handler is removed and closed (with ``flush_timeout`` set to ``close_timeout`` if given:
    a handler that never reached a server need not wait long)."""
    log = logging.getLogger(name)
    log.propagate = False
    log.addHandler(handler)
    try:
        yield log
    finally:
        log.removeHandler(handler)
        if close_timeout is not None:
            handler.flush_timeout = close_timeout
        handler.close()


def test_priority_mapping() -> None:
    expected = {
        1: Priority.TRACE,
        5: Priority.TRACE,
        7: Priority.DELOUSE,
        10: Priority.DEBUG,
        15: Priority.DEBUG,
        20: Priority.INFO,
        25: Priority.NOTICE,
        30: Priority.WARNING,
        35: Priority.WARNING,
        40: Priority.ERROR,
        50: Priority.CRITICAL,
        60: Priority.ALERT,
        70: Priority.EMERGENCY,
        99: Priority.EMERGENCY,
    }
    for level, priority in expected.items():
        assert priority_for_level(level) == priority, level


def test_records_reach_a_subscriber(server: Server, root: logging.Logger) -> None:
    handler = configure(server.url)
    with herald.connect(server.url, name="reader") as reader:
        sub = reader.subscribe("app.*")
        log = logging.getLogger("app.web")
        log.debug("not sent: below the handler's level")
        line = 1 + _lineno()
        log.warning("hello %s", "world", extra={"user": "ann", "n": 3, "ok": True, "x": 1.5})
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            log.exception("it failed")
        logging.getLogger("app.web").log(60, "alert!", extra={"obj": [1, 2]})
        handler.flush()
        got = sub.wait_for(3, timeout=10)
        first, second, third = got
        assert first.subject == "app.web"
        assert first.text == "hello world"
        assert first.record.kind == herald.Kind.LOG
        assert first.record.priority == Priority.WARNING
        assert first.fields == {"user": "ann", "n": 3, "ok": True, "x": 1.5}
        origin = first.record.origin
        assert origin.line == line
        assert origin.file == __file__
        assert origin.routine == "test_records_reach_a_subscriber"
        assert origin.thread == "MainThread"
        assert origin.host == socket.gethostname()
        # As client.log writes it: the program and the pid.
        assert origin.process == process_name()
        assert second.record.priority == Priority.ERROR
        assert second.text.startswith("it failed\nTraceback (most recent call last):")
        assert "RuntimeError: boom" in second.text
        assert third.record.priority == Priority.ALERT
        assert third.fields == {"obj": "[1, 2]"}
        with pytest.raises(herald.TimeoutError):
            sub.next(0.3)
        assert handler.dropped == 0


def _lineno() -> int:
    import inspect

    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def test_fixed_subject(server: Server) -> None:
    handler = HeraldHandler(server.url, subject="fixed.subject")
    with attached(handler, "fixed.test") as log, herald.connect(server.url) as reader:
        sub = reader.subscribe("fixed.*")
        log.error("x")
        handler.flush()
        (d,) = sub.wait_for(1, timeout=10)
        assert d.subject == "fixed.subject"


def test_server_down_never_blocks(root: logging.Logger) -> None:
    handler = configure(closed_port_url())
    log = logging.getLogger("down.test")
    start = time.perf_counter()
    for i in range(1000):
        log.info("message %d", i)
    elapsed = time.perf_counter() - start
    assert elapsed / 1000 < 0.001, elapsed
    start = time.perf_counter()
    handler.flush_timeout = 0.2
    handler.close()
    assert time.perf_counter() - start < 2


def test_why_it_cannot_connect_is_said_once_for_each_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = closed_port_url()
    handler = HeraldHandler(url)
    with attached(handler, "said.test", close_timeout=0.2) as log:
        log.warning("waits")
        time.sleep(1.2)  # attempts after 50, 100, 200, 400 ms and more: one reason
    err = capsys.readouterr().err
    assert err.count(f"HeraldHandler cannot connect to {url} yet: ") == 1, err
    assert "It keeps trying; records wait in its buffer." in err, err


def test_full_buffer_counts_drops() -> None:
    handler = HeraldHandler(closed_port_url(), capacity=10)
    with attached(handler, "drops.test", close_timeout=0.2) as log:
        for i in range(25):
            log.warning("m %d", i)
        assert handler.dropped == 15


def test_shutdown_delivers_everything(server: Server, root: logging.Logger) -> None:
    handler = configure(server.url)
    with herald.connect(server.url, name="reader") as reader:
        sub = reader.subscribe("bulk.*")
        log = logging.getLogger("bulk.numbers")
        for i in range(3000):
            log.info("n %d", i, extra={"i": i})
        logging.shutdown([weakref.ref(handler)])
        got = sub.wait_for(3000, timeout=20)
        assert [d.fields["i"] for d in got] == list(range(3000))
        assert handler.dropped == 0


def test_buffers_until_the_server_comes_up(tmp_path: Path) -> None:
    # Records logged before the server is reachable are sent once it is.
    url = closed_port_url()
    handler = HeraldHandler(url)
    with attached(handler, "early.test", close_timeout=0.2) as log:
        for n in range(3):
            log.warning("early %d", n)
        assert not handler.wait_flushed(0.2)
        assert handler.dropped == 0
        server = Server(tmp_path, listen=url.removeprefix("herald://"))
        try:
            assert handler.wait_flushed(15), "the buffered records never went out"
            with herald.connect(server.url) as client:
                assert client.monitor()["records_in"] == 3
        finally:
            server.stop()
    assert handler.dropped == 0


class _Meters(float):
    pass


def _buffered(handler: HeraldHandler) -> list:
    entries = list(handler._buffer)
    handler._buffer.clear()
    return entries


def test_packed_records_are_the_reference_bytes() -> None:
    # The background thread packs records straight from the LogRecord; the bytes must be
    # those of the Record it describes, as the reference Writer writes them.
    handler = HeraldHandler(closed_port_url(), capacity=100)
    names = ["app.web", "other", "we*ird?name", "ünï.cødé"]
    loggers = [logging.getLogger(name) for name in names]
    try:
        for log in loggers:
            log.propagate = False
            log.addHandler(handler)
            log.setLevel(1)
            log.warning("plain")
            log.log(25, "notice %s %d", "x", 3, extra={"user": "ann", "n": -5, "ok": True})
            log.info("", extra={"f": 1.5, "m": _Meters(2.0), "big": 1 << 70, "obj": [1, {2}]})
            log.log(3, "trace", stack_info=True)
            try:
                raise ValueError("boom")
            except ValueError:
                log.exception("failed: %r", {"k": 1})
        entries = _buffered(handler)
        assert len(entries) == 5 * len(loggers)
        for entry in entries:
            assert handler._encode(*entry) == handler._convert(*entry).to_bytes_reference()
        fields = handler._convert(*entries[2]).fields
        assert fields == {"f": 1.5, "m": 2.0, "big": str(1 << 70), "obj": "[1, {2}]"}
        assert "ValueError: boom" in handler._convert(*entries[4]).text
        assert handler._convert(*entries[5]).subject == "other"
        assert handler._convert(*entries[10]).subject == "we_ird_name"
        handler.subject = "fixed.subject"
        assert herald.Record.from_bytes(handler._encode(*entries[0])).subject == "fixed.subject"
    finally:
        for log in loggers:
            log.removeHandler(handler)
        handler.flush_timeout = 0.2
        handler.close()


def test_message_and_extra_are_taken_when_logged() -> None:
    # Like QueueHandler: later changes to mutable arguments do not show in the record.
    handler = HeraldHandler(closed_port_url(), capacity=100)
    with attached(handler, "taken.test", close_timeout=0.2) as log:
        items, tags = [1], {"a": 1}
        log.warning("items %s", items, extra={"tags": tags})
        items.append(2)
        tags["b"] = 2
        (entry,) = _buffered(handler)
        record = handler._convert(*entry)
        assert record.text == "items [1]"
        assert record.fields == {"tags": "{'a': 1}"}


def test_a_record_too_large_for_a_frame_is_dropped(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    handler = HeraldHandler(server.url, name="large-handler")
    with attached(handler, "large.test") as log, herald.connect(server.url) as reader:
        sub = reader.subscribe("large.*")
        log.warning("x" * (2 << 20))
        log.warning("y" * (1 << 20))  # just over the frame limit of 1 MiB
        log.warning("small")
        assert handler.wait_flushed(10)
        (d,) = sub.wait_for(1, timeout=10)
        assert d.text == "small"
        assert handler.dropped == 2
        assert handler.refused == 2
        err = capsys.readouterr().err
        assert err.count("--- Logging error ---") == 1, "said once"
        assert "`large.test`" in err and "RecordTooLargeError" in err
        assert f"bytes is larger than the {(1 << 20) - 32} bytes" in err
        # Never sent, never resent: the handler's connection never dropped.
        assert handler._client is not None and handler._client.failovers == 0
        data = reader.monitor()
        assert data["connections_total"] == 2
        assert {r: n for r, n in data["closes"].items() if n} == {}


def test_an_int_outside_i64_in_extra_is_sent_as_its_digits(server: Server) -> None:
    handler = HeraldHandler(server.url)
    with attached(handler, "ints.test") as log, herald.connect(server.url) as reader:
        sub = reader.subscribe("ints.*")
        log.warning("counted", extra={"counter": 1 << 64, "low": -(1 << 63)})
        assert handler.wait_flushed(10)
        (d,) = sub.wait_for(1, timeout=10)
        assert d.fields == {"counter": "18446744073709551616", "low": -(1 << 63)}
        assert handler.dropped == handler.refused == 0


def test_an_unsigned_64_bit_extra_is_sent_as_an_integer(server: Server) -> None:
    handler = HeraldHandler(server.url)
    with attached(handler, "u64.test") as log, herald.connect(server.url) as reader:
        sub = reader.subscribe("u64.*")
        log.warning("counted", extra={"counter": (1 << 64) - 1})
        assert handler.wait_flushed(10)
        (d,) = sub.wait_for(1, timeout=10)
        assert d.fields == {"counter": (1 << 64) - 1}


def test_identical_records_collapse_before_they_are_sent(server: Server) -> None:
    from herald.storm import REPEATED_FIELD, STORM_FIELD, TOTAL_FIELD

    handler = HeraldHandler(server.url, storm_window=0.3, storm_repeats=3)
    with attached(handler, "storm.test") as log, herald.connect(server.url) as reader:
        sub = reader.subscribe("storm.*")
        for n in range(1000):
            log.warning("pump 3 cavitating", extra={"n": n})
        log.warning("pump 3 stopped")
        handler.close()  # ends the storm at once: its last summary is sent
        got: list = []
        while True:
            try:
                got.extend(sub.wait_for(1, timeout=1))
            except TimeoutError:
                break
        plain = [d for d in got if STORM_FIELD not in d.fields]
        assert [d.text for d in plain] == ["pump 3 cavitating"] * 3 + ["pump 3 stopped"]
        (mark,) = [d for d in got if d.fields.get(STORM_FIELD) == "collapsing"]
        assert mark.fields["n"] == 3
        assert sum(d.fields.get(REPEATED_FIELD, 0) for d in got) == 996
        last = [d for d in got if STORM_FIELD in d.fields][-1]
        assert last.fields[STORM_FIELD] == "ended"
        assert last.fields[TOTAL_FIELD] == 996
        assert handler.held == 996 and handler.dropped == 0


def test_drops_are_reported_once_a_server_answers(tmp_path: Path) -> None:
    # Without a disk buffer too: what the full buffer dropped while no server answered is
    # reported (herald.logger.dropped) when one does, after the records it kept.
    url = closed_port_url()
    handler = HeraldHandler(url, capacity=10, subject="drops.report")
    with attached(handler, "drops.offline", close_timeout=0.2) as log:
        for i in range(25):
            log.warning("m %d", i)
        assert handler.dropped == 15
        server = Server(tmp_path, listen=url.removeprefix("herald://"))
        try:
            with herald.connect(server.url) as reader:
                sub = reader.subscribe("drops.*")
                assert handler.wait_flushed(15), "the buffered records never went out"
                got = sub.wait_for(11, timeout=15)
                texts = [d.text for d in got if d.record.type != "herald.logger.dropped"]
                assert texts == [f"m {i}" for i in range(10)]
                (report,) = [d for d in got if d.record.type == "herald.logger.dropped"]
                assert report.fields["dropped"] == 15
                assert report.fields["dropped_by_reason"] == {"buffer_full": 15}
                assert report.fields["dropped_by_priority"] == {"WARNING": 15}
        finally:
            server.stop()
