"""Failover between the servers of the URL: subscriptions made again (and told so: an
Interrupted notice), unacknowledged records resent, the producer id and the record numbers
kept, the same server taken back once it returns, and a clear end when none answers."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest
from conftest import Server, resend, wait_until

import herald
from herald import Kind, Record


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[Tuple[Server, Server]]:
    a = Server(tmp_path / "a")
    try:
        b = Server(tmp_path / "b")
    except BaseException:
        a.stop()
        raise
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def test_subscriptions_move_to_the_next_server(two_servers: Tuple[Server, Server]) -> None:
    a, b = two_servers
    with herald.connect(f"herald://{a.address},{b.address}", name="watcher") as client:
        assert client.address == a.address
        sub = client.subscribe("failover.*")
        a.stop()
        wait_until(lambda: client.failovers == 1, 10, "failover to the second server")
        assert client.address == b.address
        client.flush()  # B has the subscription once the flush behind it is acknowledged
        with herald.connect(b.url, name="producer") as producer:
            producer.publish("failover.after", text="on b")
            producer.flush()
        got = sub.next(10)
        assert got is not None and got.text == "on b"
        assert sub.failovers == 1
        names = [c["name"] for c in client.monitor()["clients"]]
        assert "watcher" in names


def test_a_failover_interrupts_each_subscription(two_servers: Tuple[Server, Server]) -> None:
    a, b = two_servers
    with herald.connect(f"herald://{a.address},{b.address}", name="interrupted") as client:
        producer = client.producer
        events = client.subscribe("moved.*")
        records = client.subscribe("moved.*")
        called: List[object] = []
        client.subscribe("moved.*", callback=called.append)
        client.publish("moved.before", text="on a")  # record number 1, on A
        client.flush()
        a.stop()
        wait_until(lambda: client.failovers == 1, 10, "failover to the second server")
        client.flush()  # B has the subscriptions once the flush behind them is acknowledged
        client.publish("moved.after", text="on b")  # record number 2, on B
        client.flush()
        got = [events.next_event(10) for _ in range(3)]
        assert isinstance(got[0], herald.Delivered) and got[0].text == "on a"
        notice = got[1]
        assert isinstance(notice, herald.Interrupted), got
        assert (notice.lost, notice.resumed) == (a.address, b.address)
        assert 0 < notice.down < 10
        assert isinstance(got[2], herald.Delivered) and got[2].text == "on b"
        assert events.interruptions == [notice] and events.failovers == 1
        # Read as records alone, the notice is passed over (and kept).
        assert [d.text for d in records.wait_for(2, 10)] == ["on a", "on b"]
        assert records.interruptions == [notice] and records.pending() == 0
        wait_until(lambda: len(called) == 2, 10, "the callback")
        assert all(isinstance(d, herald.Delivered) for d in called), "records only"
        assert client.producer == producer
        # B knows the client by the same id, and its record there by number 2.
        again = Record(kind=Kind.MESSAGE, subject="moved.after", time=1, text="again")
        resend(b.address, producer, 2, [again])
        assert client.monitor()["duplicates"] == 1
        with pytest.raises(herald.TimeoutError):
            events.next_event(0.3)


def test_unacknowledged_records_are_resent(two_servers: Tuple[Server, Server]) -> None:
    a, b = two_servers
    with herald.connect(b.url, name="reader") as reader:
        sub = reader.subscribe("resend.*")
        with herald.connect(f"herald://{a.address},{b.address}", name="writer") as writer:
            os.kill(a.proc.pid, signal.SIGSTOP)  # A reads nothing more and acknowledges nothing
            for i in range(500):
                writer.publish("resend.n", fields={"i": i})
            writer._conn.send_batch(if_any=True)
            wait_until(lambda: writer._conn.unacked() > 0, 5, "records in flight")
            a.stop()
            writer.flush(15)
            assert writer.failovers == 1
        got = sub.wait_for(500, 10)
        assert [d.fields["i"] for d in got] == list(range(500))


def test_the_same_server_is_taken_back_when_it_returns(tmp_path: Path) -> None:
    first = Server(tmp_path / "one")
    address = first.address
    with herald.connect(first.url, reconnect_timeout=30) as client:
        sub = client.subscribe("back.*")
        first.stop()
        wait_until(lambda: "failing over" in str(_down(client)), 5, "the client noticing")
        again = Server(tmp_path / "two", listen=address)
        try:
            wait_until(lambda: client.failovers == 1, 15, "reconnection")
            client.publish("back.here", text="again")
            got = sub.next(10)
            assert got is not None and got.text == "again"
        finally:
            again.stop()


def _down(client: herald.Client) -> object:
    return client._conn._down


def test_the_client_ends_when_no_server_answers(server: Server) -> None:
    client = herald.connect(server.url, reconnect_timeout=3.0)
    sub = client.subscribe("gone.*")
    server.stop()
    wait_until(lambda: _down(client) is not None, 10, "the client failing over")
    lost = time.monotonic()
    wait_until(lambda: client.closed, 10, "the client giving up")
    # It tries until the timeout, not until the backoff's next pause would pass it (2.56 s);
    # the margin is for the 20 ms polls and a loaded machine.
    assert time.monotonic() - lost >= 2.8
    assert sub.next(1) is None
    with pytest.raises(herald.ConnectionClosed, match="no server of the URL answered within 3.0 s"):
        client.publish("gone.x")
    client.close()


def test_failover_off_ends_at_once(server: Server) -> None:
    client = herald.connect(server.url, reconnect_timeout=0)
    server.stop()
    wait_until(lambda: client.closed, 5, "the client closing")
    with pytest.raises(herald.ConnectionClosed, match="closed the connection|lost"):
        client.monitor()
    client.close()


def test_a_request_waiting_at_the_failover_fails_clearly(
    two_servers: Tuple[Server, Server],
) -> None:
    a, b = two_servers
    with herald.connect(f"herald://{a.address},{b.address}") as client:
        os.kill(a.proc.pid, signal.SIGSTOP)
        failed = []

        def kill_once_waiting() -> None:
            wait_until(lambda: bool(client._conn._waiters), 10, "the MONITOR request waiting")
            a.stop()

        threading.Thread(target=kill_once_waiting, daemon=True).start()
        try:
            client.monitor(timeout=10)
        except herald.ConnectionClosed as err:
            failed.append(str(err))
        assert failed and "failing over" in failed[0], failed
        wait_until(lambda: client.failovers == 1, 10, "failover")
        assert client.monitor()["clients"]


def test_a_client_that_gives_up_counts_the_records_it_held() -> None:
    from herald.wire.frames import Welcome, encode_frame

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    url = f"herald://127.0.0.1:{listener.getsockname()[1]}"
    stop = threading.Event()

    def silent() -> None:
        conn, _ = listener.accept()
        listener.close()
        with conn:
            conn.sendall(encode_frame(Welcome(1, "silent", 60_000, 1 << 20, 1)))
            conn.settimeout(0.02)
            while not stop.is_set():
                try:
                    if not conn.recv(65536):
                        break
                except socket.timeout:
                    continue

    server = threading.Thread(target=silent, daemon=True)
    server.start()
    client = herald.connect(url, name="given-up", reconnect_timeout=0.3)
    try:
        for i in range(200):
            client.publish("app.given_up", text=f"record {i}")
        time.sleep(0.3)
        assert client.abandoned == 0, "nothing is given up while it runs"
        stop.set()  # the server goes; no other answers
        server.join(5)
        deadline = time.monotonic() + 10
        while not client.closed and time.monotonic() < deadline:
            time.sleep(0.02)
        assert client.closed, "the client gave up"
        assert client.abandoned == 200
    finally:
        client.close(0.1)
