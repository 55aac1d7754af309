"""The client against a real `herald serve` process (and the Rust CLI for interop)."""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Iterator, List

import pytest
from conftest import Server, closed_port_url

import herald
from herald import Kind, Priority, Record


@pytest.fixture
def client(server: Server) -> Iterator[herald.Client]:
    with herald.connect(server.url, name="pytest-client") as c:
        yield c


def test_monitor_shows_the_client_name(client: herald.Client) -> None:
    data = client.monitor()
    assert data["server"] == client.server
    names = [c["name"] for c in data["clients"]]
    assert "pytest-client" in names


def test_name_from_url(server: Server) -> None:
    with herald.connect(server.url + "?name=from-url") as c:
        assert "from-url" in [x["name"] for x in c.monitor()["clients"]]


def test_ten_thousand_records_in_order(server: Server, client: herald.Client) -> None:
    with herald.connect(server.url, name="reader") as reader:
        sub = reader.subscribe("bench.*")
        for i in range(10_000):
            client.publish("bench.numbers", type="n", text=f"n {i}", fields={"i": i, "s": "x"})
        client.flush()
        got = sub.wait_for(10_000, timeout=30)
        assert [d.fields["i"] for d in got] == list(range(10_000))
        assert got[5].text == "n 5"
        assert got[5].record.type == "n"
        assert got[5].fields == {"i": 5, "s": "x"}
        assert got[5].record.kind == Kind.MESSAGE
        seqs = [d.seq for d in got]
        assert seqs == sorted(seqs)
        assert sub.lost == 0
        sub.close()
        assert sub.next(1) is None


def test_priority_filter(client: herald.Client) -> None:
    with client.subscribe("app.*", priorities=">=WARNING") as sub:
        for p in Priority:
            client.log(p, "app.prio", p.name, n=int(p))
        client.flush()
        got = sub.wait_for(5, timeout=10)
        assert [d.record.priority for d in got] == [
            Priority.WARNING,
            Priority.ERROR,
            Priority.CRITICAL,
            Priority.ALERT,
            Priority.EMERGENCY,
        ]
        with pytest.raises(herald.TimeoutError):
            sub.next(0.3)


def test_callback_subscription(client: herald.Client) -> None:
    seen: List[str] = []
    done = threading.Event()

    def on_record(d: herald.Delivered) -> None:
        seen.append(d.text)
        if len(seen) == 3:
            done.set()

    with client.subscribe("cb.*", callback=on_record):
        for i in range(3):
            client.publish("cb.x", text=str(i))
        assert done.wait(10)
    assert seen == ["0", "1", "2"]


def test_sync_send_received(client: herald.Client) -> None:
    record = Record(kind=Kind.MESSAGE, subject="sync.one", time=time.time_ns(), text="hi")
    ack = client.sync_send(record)
    assert ack.count == 1
    assert ack.level == herald.AckLevel.RECEIVED


def test_sync_send_stored(client: herald.Client) -> None:
    info = Record(Kind.LOG, "store.me", time.time_ns(), priority=Priority.INFO, text="keep")
    ack = client.sync_send(info, level="stored")
    assert ack.level == herald.AckLevel.STORED
    assert ack.count == 1


def test_sync_send_stored_debug_is_refused(client: herald.Client) -> None:
    debug = Record(Kind.LOG, "store.not", time.time_ns(), priority=Priority.DEBUG, text="no")
    with pytest.raises(herald.ServerError) as caught:
        client.sync_send(debug, level="stored")
    assert caught.value.code == "archive"
    assert "store.not" in str(caught.value)
    # The connection stays usable.
    client.flush()
    assert client.monitor()["server"]


def test_heartbeats_keep_an_idle_connection(client: herald.Client) -> None:
    time.sleep(6.5)
    assert not client.closed
    client.flush()


def test_connect_to_a_closed_port() -> None:
    url = closed_port_url()
    with pytest.raises(herald.ConnectError) as caught:
        herald.connect(url, timeout=2)
    assert url.removeprefix("herald://") in str(caught.value)


@pytest.mark.parametrize(
    "url, words",
    [
        ("http://localhost:7400", "scheme `http`"),
        ("herald://", "no server named"),
        ("herald://h:99999", "bad port `99999`"),
        ("herald://h?colour=blue", "unknown option `colour`"),
        ("herald://::1", "needs brackets"),
    ],
)
def test_bad_urls(url: str, words: str) -> None:
    with pytest.raises(herald.UrlError) as caught:
        herald.connect(url)
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_url_parsing() -> None:
    url = herald.parse_url("herald://h1:7400,h2?name=mount&token=t")
    assert url.servers == [("h1", 7400), ("h2", 7400)]
    assert (url.name, url.token) == ("mount", "t")
    assert herald.parse_url("[::1]:9000").servers == [("::1", 9000)]


def test_subscribe_and_get(server: Server, client: herald.Client) -> None:
    def publish_soon() -> None:
        with herald.connect(server.url) as other:
            time.sleep(0.2)
            other.publish("sag.one", text="first")
            other.publish("sag.one", text="second")

    threading.Thread(target=publish_soon, daemon=True).start()
    got = client.subscribe_and_get("sag.*", timeout=10)
    assert got.text == "first"
    subs = [len(c["subscriptions"]) for c in client.monitor()["clients"]]
    assert sum(subs) == 0, "the subscription is gone afterwards"


def test_subscribe_and_get_times_out(client: herald.Client) -> None:
    with pytest.raises(herald.TimeoutError, match="within 0.2 s"):
        client.subscribe_and_get("nobody.*", timeout=0.2, priorities=">=ERROR")


def test_log_carries_this_process_as_origin(client: herald.Client) -> None:
    with client.subscribe("origin.*", kinds="log") as sub:
        client.log(Priority.WARNING, "origin.test", "where from")
        got = sub.next(10)
    assert got is not None
    origin = got.record.origin
    assert origin.host == socket.gethostname()
    assert origin.process.endswith(f"[{os.getpid()}]")
    assert origin.thread == threading.current_thread().name


def test_a_slow_subscriber_sees_its_losses(server: Server, client: herald.Client) -> None:
    sub = client.subscribe("gap.*", options=herald.DeliveryOptions(max_records=100))
    gate = threading.Event()
    deliver = sub._deliver

    def stalled(d: herald.Delivered) -> None:  # the reader thread stops reading for a while
        gate.wait(20)
        deliver(d)

    sub._deliver = stalled  # type: ignore[method-assign]
    total = 20_000
    with herald.connect(server.url, name="fast-producer") as producer:
        for i in range(total):
            producer.publish("gap.n", text="x" * 1000, fields={"i": i})
        producer.flush(30)
    gate.set()
    received = []
    while len(received) + sub.lost < total:
        got = sub.next(10)
        assert got is not None
        received.append(got.record.fields["i"])
    assert sub.lost > 0 and sub.gaps, "a stalled reader with a 100-record queue must lose some"
    assert len(received) + sub.lost == total
    assert sum(g.count for g in sub.gaps) == sub.lost
    assert all(dict(g.by_priority) == {Priority.INFO: g.count} for g in sub.gaps)
    assert received == sorted(received)
    mine = [c for c in client.monitor()["clients"] if c["name"] == "pytest-client"][0]
    assert [s["dropped"] for s in mine["subscriptions"]] == [sub.lost], "the monitor agrees"


def test_a_failing_callback_does_not_end_the_subscription(client: herald.Client) -> None:
    seen: List[str] = []
    done = threading.Event()

    def callback(d: herald.Delivered) -> None:
        seen.append(d.text)
        if d.text == "bad":
            raise ValueError("the program's own bug")
        done.set()

    with client.subscribe("cb.*", callback=callback):
        client.publish("cb.x", text="bad")
        client.publish("cb.x", text="good")
        client.flush()
        assert done.wait(10), seen
    assert seen == ["bad", "good"]
