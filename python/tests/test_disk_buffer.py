"""The logging handler's disk buffer (``buffer_dir``): records logged while no server answers
go to disk, survive the producer's restart (and a crash), and reach the server once, in
order, before newer ones; a full quota sheds the lowest priorities and reports the loss."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest
from conftest import Server, closed_port_url, wait_until

import herald
from herald.drops import DROP_REPORT_TYPE
from herald.errors import SpoolLockedError
from herald.logging import HeraldHandler
from herald.segment import MAGIC, encode_entry
from herald.spool import Spool
from herald.subscription import Subscription

PRODUCER = Path(__file__).with_name("disk_buffer_producer.py")
PYTHON_DIR = Path(__file__).resolve().parents[1]


@pytest.fixture
def buffer_dir() -> Iterator[str]:
    directory = tempfile.mkdtemp(prefix="herald-spool-")
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def produce(url: str, directory: str, prefix: str, count: int, *extra: str) -> str:
    """Runs the producer to its end; returns what it printed."""
    done = subprocess.run(
        [sys.executable, str(PRODUCER), url, directory, prefix, str(count), *extra],
        cwd=PYTHON_DIR,
        env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def start_producer(url: str, directory: str, prefix: str, count: int, *extra: str):  # type: ignore[no-untyped-def]
    return subprocess.Popen(
        [sys.executable, str(PRODUCER), url, directory, prefix, str(count), *extra],
        cwd=PYTHON_DIR,
        env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def collect(sub: Subscription, last: str, timeout: float = 30) -> List[herald.Delivered]:
    """Records of the subscription until one whose text is ``last``."""
    got: List[herald.Delivered] = []
    deadline = time.monotonic() + timeout
    while not got or got[-1].text != last:
        left = deadline - time.monotonic()
        assert left > 0, f"`{last}` did not come; last seen: {[d.text for d in got[-3:]]}"
        item = sub.next(left)
        assert item is not None
        got.append(item)
    return got


def texts(delivered: List[herald.Delivered]) -> List[str]:
    return [d.text for d in delivered if d.record.type != DROP_REPORT_TYPE]


def test_records_logged_without_a_server_arrive_once_in_order_after_restarts(
    tmp_path: Path, buffer_dir: str
) -> None:
    url = closed_port_url()
    address = url[len("herald://") :]
    # Run 1 logs with no server and ends; run 2 does the same (it starts with run 1's
    # records on disk and adds its own after them).
    assert "closed" in produce(url, buffer_dir, "first", 3000)
    assert any(name.endswith(".seg") for name in os.listdir(buffer_dir))
    assert "closed" in produce(url, buffer_dir, "second", 2000)
    server = Server(tmp_path, listen=address)
    try:
        with herald.connect(server.url) as client, client.subscribe("spool.*") as sub:
            # Run 3 meets the server: what is on disk goes first, then its own records.
            producer = start_producer(url, buffer_dir, "third", 500)
            try:
                got = collect(sub, "third 499")
                assert producer.wait(30) == 0, producer.stderr.read() if producer.stderr else ""
            finally:
                if producer.poll() is None:
                    producer.kill()
                    producer.wait(10)
        expected = (
            [f"first {i}" for i in range(3000)]
            + [f"second {i}" for i in range(2000)]
            + [f"third {i}" for i in range(500)]
        )
        assert texts(got) == expected
        times = [d.record.time for d in got if d.record.type != DROP_REPORT_TYPE]
        assert times == sorted(times), "the records keep the times they were logged at"
        assert not [d for d in got if d.record.type == DROP_REPORT_TYPE], "nothing was lost"
    finally:
        server.stop()
    # Everything was acknowledged: the buffer holds nothing more.
    spool = Spool(buffer_dir)
    try:
        assert not spool.pending
    finally:
        spool.close()


def test_a_killed_producer_sends_what_it_put_on_disk_at_its_next_start(
    tmp_path: Path, buffer_dir: str
) -> None:
    url = closed_port_url()
    producer = start_producer(url, buffer_dir, "crashed", 2000, str(256 << 20), "hang")
    try:
        assert producer.stdout is not None
        while "settled" not in producer.stdout.readline():
            assert producer.poll() is None, producer.stderr.read() if producer.stderr else ""
        os.kill(producer.pid, signal.SIGKILL)  # no close, no flush: a crash
    finally:
        producer.kill()
        producer.wait(10)
    server = Server(tmp_path, listen=url[len("herald://") :])
    try:
        with herald.connect(server.url) as client, client.subscribe("spool.*") as sub:
            assert "closed" in produce(url, buffer_dir, "next", 10)
            got = collect(sub, "next 9")
        assert texts(got) == [f"crashed {i}" for i in range(2000)] + [
            f"next {i}" for i in range(10)
        ]
    finally:
        server.stop()


def logged_over_quota(
    tmp_path: Path, buffer_dir: str, count: int, quota: int
) -> List[herald.Delivered]:
    """Logs ``count`` records ``tight i`` while no server answers, over a disk buffer of
    ``quota`` bytes that cannot hold them; then, with a server up, what a second run of the
    producer sends from disk, up to its own record ``after 0``."""
    url = closed_port_url()
    out = produce(url, buffer_dir, "tight", count, str(quota))
    assert "lost=0" not in out, out
    server = Server(tmp_path, listen=url[len("herald://") :])
    try:
        with herald.connect(server.url) as client, client.subscribe("*") as sub:
            assert "closed" in produce(url, buffer_dir, "after", 1, str(quota))
            return collect(sub, "after 0")
    finally:
        server.stop()


def test_a_full_quota_sheds_the_lowest_priority_and_reports_it(
    tmp_path: Path, buffer_dir: str
) -> None:
    # 80 KiB hold some 500 of these records: DEBUG ones are shed to keep every ERROR.
    got = logged_over_quota(tmp_path, buffer_dir, 4000, 80 * 1024)
    kept = texts(got)[:-1]
    errors = [f"tight {i}" for i in range(0, 4000, 10)]
    assert [t for t in kept if int(t.split()[1]) % 10 == 0] == errors, "every ERROR kept"
    debug_kept = [t for t in kept if int(t.split()[1]) % 10 != 0]
    assert kept == sorted(kept, key=lambda t: int(t.split()[1])), "in order"
    reports = [d for d in got if d.record.type == DROP_REPORT_TYPE]
    assert reports, "the loss is reported"
    lost_debug = sum(int(r.record.fields["dropped_by_priority"].get("DEBUG", 0)) for r in reports)
    assert lost_debug == 3600 - len(debug_kept)
    assert sum(int(r.record.fields["dropped"]) for r in reports) == lost_debug
    assert all("disk_quota" in r.record.fields["dropped_by_reason"] for r in reports)
    assert all(r.record.priority == herald.Priority.WARNING for r in reports)


def test_a_quota_too_small_for_the_errors_still_keeps_the_report_of_their_loss(
    tmp_path: Path, buffer_dir: str
) -> None:
    # 64 KiB (the least quota) hold some 400 of these records, fewer than the 800 ERRORs:
    # ERRORs are shed too, and the reports, shed last, say how many.
    got = logged_over_quota(tmp_path, buffer_dir, 8000, 64 * 1024)
    kept = texts(got)[:-1]
    errors_kept = [t for t in kept if int(t.split()[1]) % 10 == 0]
    assert 0 < len(errors_kept) < 800, len(errors_kept)
    reports = [d for d in got if d.record.type == DROP_REPORT_TYPE]
    assert reports, "the loss is reported"
    lost = {"ERROR": 0, "DEBUG": 0}
    for report in reports:
        for name, n in report.record.fields["dropped_by_priority"].items():
            lost[name] = lost.get(name, 0) + int(n)
    assert lost["ERROR"] == 800 - len(errors_kept), lost
    assert lost["DEBUG"] == 7200 - (len(kept) - len(errors_kept)), lost
    assert set(lost) == {"ERROR", "DEBUG"}, "no report was shed (it would count itself)"


def test_an_outage_goes_to_disk_and_is_sent_when_the_server_is_back(
    tmp_path: Path, buffer_dir: str
) -> None:
    server = Server(tmp_path / "one")
    address = server.address
    handler = HeraldHandler(
        url=server.url, buffer_dir=buffer_dir, storm_repeats=0, flush_timeout=2.0
    )
    logger = logging.getLogger("spool.outage")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        logger.info("before 0")
        assert handler.wait_flushed(10)
        server.stop()
        for i in range(3000):
            logger.info("during %d", i)
        wait_until(lambda: handler.spool_pending and not handler._buffer, 10, "spilling to disk")
        server = Server(tmp_path / "two", listen=address)
        with herald.connect(server.url) as client, client.subscribe("spool.*") as sub:
            for i in range(100):
                logger.info("after %d", i)
            got = collect(sub, "after 99")
        during = [t for t in texts(got) if not t.startswith("before")]
        assert during == [f"during {i}" for i in range(3000)] + [f"after {i}" for i in range(100)]
        assert handler.dropped == 0 and handler.spool_lost == 0
        assert handler.wait_flushed(10)
        assert not handler.spool_pending
    finally:
        logger.removeHandler(handler)
        handler.close()
        server.stop()


def test_a_directory_serves_one_producer(buffer_dir: str) -> None:
    first = HeraldHandler(url=closed_port_url(), buffer_dir=buffer_dir, flush_timeout=0.2)
    try:
        with pytest.raises(SpoolLockedError, match=f"pid={os.getpid()}"):
            HeraldHandler(url=closed_port_url(), buffer_dir=buffer_dir)
    finally:
        first.close()
    HeraldHandler(url=closed_port_url(), buffer_dir=buffer_dir, flush_timeout=0.2).close()


def spooled(directory: str) -> List[Tuple[int, bytes]]:
    spool = Spool(directory)
    try:
        return spool.read(1 << 30)
    finally:
        spool.close()


def test_a_torn_tail_is_cut_and_counted(buffer_dir: str) -> None:
    spool = Spool(buffer_dir)
    spool.append([(4, b"\x80"), (6, b"\x81\x00\x01"), (8, b"\x80")])
    spool.close()
    (segment,) = [name for name in os.listdir(buffer_dir) if name.endswith(".seg")]
    path = os.path.join(buffer_dir, segment)
    with open(path, "ab") as f:
        f.write(encode_entry(99, 9, b"\x80\x80\x80")[:-2])  # a crash in mid-write
    spool = Spool(buffer_dir)
    try:
        assert spool.losses.by_reason == {"disk_torn": 1}
        assert spool.losses.by_priority == {9: 1}
        assert [record for _, record in spool.read(1 << 20)] == [b"\x80", b"\x81\x00\x01", b"\x80"]
        # The numbers go on after the ones reserved before: none is used twice.
        assert spool.numbering.next_seq > 3
    finally:
        spool.close()
    with open(path, "rb") as f:
        assert f.read(len(MAGIC)) == MAGIC


def test_a_rewritten_entry_with_a_bad_crc_is_cut(buffer_dir: str) -> None:
    spool = Spool(buffer_dir)
    spool.append([(4, b"\x80"), (4, b"\x80")])
    spool.close()
    (segment,) = [name for name in os.listdir(buffer_dir) if name.endswith(".seg")]
    path = os.path.join(buffer_dir, segment)
    with open(path, "r+b") as f:
        f.seek(-1, os.SEEK_END)
        f.write(b"\x90")  # the last record's byte changed: its CRC no longer matches
    assert [seq for seq, _ in spooled(buffer_dir)] == [1]


def test_records_come_back_in_order_across_segments_and_reopening(buffer_dir: str) -> None:
    spool = Spool(buffer_dir, quota=1 << 20)  # 64 KiB segments
    records = [(4 + i % 5, b"\xa5" + f"{i:05d}".encode()) for i in range(20_000)]
    for start in range(0, len(records), 333):
        spool.append(records[start : start + 333])
    assert len([n for n in os.listdir(buffer_dir) if n.endswith(".seg")]) > 3
    got: List[Tuple[int, bytes]] = []
    for budget in (10, 1, 5000, 70_000, 123):  # budgets smaller than an entry too
        got += spool.read(budget)
    spool.acknowledge(got[-1][0])
    spool.close()
    spool = Spool(buffer_dir, quota=1 << 20)
    try:
        while True:
            more = spool.read(4096)
            if not more:
                break
            got += more
    finally:
        spool.close()
    assert [seq for seq, _ in got] == list(range(1, 20_001))
    assert [record for _, record in got] == [record for _, record in records]


def test_records_sent_but_never_acknowledged_are_kept_at_close(
    tmp_path: Path, buffer_dir: str
) -> None:
    server = Server(tmp_path / "stuck")
    handler = HeraldHandler(
        url=server.url, buffer_dir=buffer_dir, storm_repeats=0, flush_timeout=1.0
    )
    logger = logging.getLogger("spool.stuck")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        for i in range(50):
            logger.info("acked %d", i)
        assert handler.wait_flushed(10)
        server.proc.send_signal(signal.SIGSTOP)  # takes bytes, answers nothing
        for i in range(200):
            logger.info("unacked %d", i)
        wait_until(lambda: handler.sent == 250, 10, "handing the records to the client")
    finally:
        logger.removeHandler(handler)
        handler.close()  # no acknowledgement comes: they go to disk
        server.proc.send_signal(signal.SIGCONT)
        server.stop()
    assert handler.spool_lost == 0 and handler.dropped == 0
    server = Server(tmp_path / "next")
    try:
        with herald.connect(server.url) as client, client.subscribe("spool.*") as sub:
            handler = HeraldHandler(url=server.url, buffer_dir=buffer_dir, storm_repeats=0)
            logger.addHandler(handler)
            try:
                logger.info("next 0")
                got = collect(sub, "next 0")
            finally:
                logger.removeHandler(handler)
                handler.close()
        assert texts(got) == [f"unacked {i}" for i in range(200)] + ["next 0"]
    finally:
        server.stop()
