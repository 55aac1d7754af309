"""The handler with no server at first: calls stay cheap, and once a server comes up on the
URL everything buffered is delivered, in order."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

from conftest import Server

import herald
from herald.logging import HeraldHandler


def test_records_logged_before_the_server_starts_arrive(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    handler = HeraldHandler(url=f"herald://{address}", name="early-bird")
    logger = logging.getLogger("early.bird")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        started = time.perf_counter()
        for i in range(200):
            logger.info("before %d", i)
        assert time.perf_counter() - started < 1.0, "logging must not wait for the server"
        time.sleep(0.3)  # the handler's first connection attempts fail meanwhile
        server = Server(tmp_path, listen=address)
        try:
            with herald.connect(server.url) as client, client.subscribe("early.*") as sub:
                for i in range(200, 250):
                    logger.info("after %d", i)
                assert handler.wait_flushed(20)
                texts = []
                while not texts or texts[-1] != "after 249":
                    got = sub.next(20)
                    assert got is not None
                    texts.append(got.text)
            # Some records may have been sent before the subscription started (they are in the
            # archive); everything later arrives live, in order.
            assert [t for t in texts if t.startswith("after")] == [
                f"after {i}" for i in range(200, 250)
            ]
            logs = client_logs(server)
            assert [r["text"] for r in logs] == [f"before {i}" for i in range(200)] + [
                f"after {i}" for i in range(200, 250)
            ]
            assert handler.dropped == 0
        finally:
            server.stop()
    finally:
        logger.removeHandler(handler)
        handler.close()


def client_logs(server: Server) -> list:
    with herald.connect(server.url) as client:
        deadline = time.monotonic() + 10
        while True:
            logs = client.logs("-1h", "now", subject="early.*")
            if len(logs) >= 250 or time.monotonic() > deadline:
                return logs
            time.sleep(0.1)


def test_every_drop_is_counted_when_many_threads_fill_the_buffer() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"herald://127.0.0.1:{s.getsockname()[1]}"  # nothing listens: nothing is sent
    handler = HeraldHandler(url=url, capacity=1000, flush_timeout=0.5)
    logger = logging.getLogger("crowded.threads")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        threads = [
            threading.Thread(target=lambda: [logger.warning("x %d", i) for i in range(5000)])
            for _ in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert handler.sent == 0
        assert handler.dropped + len(handler._buffer) == 8 * 5000
        assert len(handler._buffer) == 1000
    finally:
        logger.removeHandler(handler)
        handler.close()


def test_records_no_server_took_before_close_are_counted_and_said(capsys) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"herald://127.0.0.1:{s.getsockname()[1]}"  # nothing listens: nothing is sent
    handler = HeraldHandler(url=url, flush_timeout=0.3)
    logger = logging.getLogger("never.sent")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        for i in range(10):
            logger.warning("unsent %d", i)
    finally:
        logger.removeHandler(handler)
        handler.close()
    # Gone, but not silently: counted, and said on stderr (no server can be told).
    assert (handler.sent, handler.dropped) == (0, 10)
    assert "closed with 10 records no server took" in capsys.readouterr().err


def test_a_url_that_does_not_parse_is_refused_when_the_handler_is_made() -> None:
    for url in ["http://x:1", "herald://h:notaport"]:
        try:
            HeraldHandler(url=url)
        except herald.UrlError:
            continue
        raise AssertionError(f"{url} was taken")


def refusing_server(listen: float) -> tuple:
    """A server that says WELCOME, reads for ``listen`` seconds without acknowledging, then
    refuses the client for good (``unauthorized``) and stops listening. Returns its URL and
    a list that gets the bytes it read."""
    from herald.wire.frames import Error, Welcome, encode_frame

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    url = f"herald://127.0.0.1:{listener.getsockname()[1]}"
    read: list = []

    def serve() -> None:
        conn, _ = listener.accept()
        listener.close()
        with conn:
            conn.sendall(encode_frame(Welcome(1, "refusing", 60_000, 1 << 20, 1)))
            conn.settimeout(0.02)
            until, got = time.monotonic() + listen, 0
            while time.monotonic() < until:
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    break
                got += len(data)
            read.append(got)
            conn.sendall(encode_frame(Error(0, "unauthorized", "token revoked")))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return url, read, thread


def test_records_of_a_connection_the_server_ends_for_good_are_counted() -> None:
    url, read, server = refusing_server(0.8)
    handler = HeraldHandler(url=url, name="refused", flush_timeout=0.5)
    logger = logging.getLogger("refused.app")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        time.sleep(0.3)  # connected: records go out as they are logged
        for i in range(300):
            logger.warning("record %d", i)
        server.join(5)
        assert read and read[0] > 300 * 20, "the records were sent"
        # Sent, never acknowledged, and the connection ended for good: lost, and counted.
        deadline = time.monotonic() + 10
        while handler.dropped < 300 and time.monotonic() < deadline:
            handler.flush()  # the flush finds the client gone
            time.sleep(0.05)
        assert handler.dropped == 300
    finally:
        logger.removeHandler(handler)
        handler.close()
