"""Information objects, archive queries and request/reply against a real `herald serve`."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, List

import pytest
from conftest import Server

import herald
from herald import Priority


@pytest.fixture
def client(server: Server) -> Iterator[herald.Client]:
    with herald.connect(server.url, name="pytest-info") as c:
        yield c


def retry(query: Callable[[], Any], done: Callable[[Any], bool], seconds: float = 5.0) -> Any:
    """Repeats ``query`` until ``done`` says its answer is complete (the archive writes
    asynchronously)."""
    deadline = time.monotonic() + seconds
    while True:
        answer = query()
        if done(answer) or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def sensor_history(client: herald.Client, temps: List[float]) -> int:
    client.declare_type("sensor", [("temp", "double", "temperature")], description="a sensor")
    start = time.time_ns()
    for temp in temps:
        client.set_info("room.a", "sensor", temp=temp)
    return start


def test_declare_set_get_list(client: herald.Client) -> None:
    client.declare_type("sensor", [("temp", "double", "temperature")], description="a sensor")
    first = client.set_info("room.a", "sensor", temp=20.5)
    assert first["name"] == "room.a"
    assert first["type"] == "sensor"
    assert first["version"] == 1
    assert first["attributes"] == {"temp": 20.5}
    second = client.set_info("room.a", temp=21.0)
    assert second["version"] == 2
    assert second["attributes"]["temp"] == 21.0
    client.set_info("room.b", "sensor", temp=1.0)
    got = client.get_info("room.a")
    assert got is not None and got["version"] == 2 and got["attributes"] == {"temp": 21.0}
    assert client.get_info("room.none") is None
    assert sorted(o["name"] for o in client.list_info("room\\..*")) == ["room.a", "room.b"]
    assert [o["name"] for o in client.list_info("room\\.b")] == ["room.b"]
    assert len(client.list_info(types="sensor")) == 2


def test_info_subscription_sends_snapshot_then_changes(client: herald.Client) -> None:
    client.declare_type("valve", [("open", "bool", "")])
    client.set_info("plant.v1", "valve", open=False)
    client.set_info("other.v9", "valve", open=False)
    with client.subscribe_info("plant\\..*") as sub:
        first = herald.InfoChange.from_delivered(sub.next(10) or pytest.fail("ended"))
        assert first is not None
        assert (first.reason, first.name) == ("snapshot", "plant.v1")
        assert first.object["attributes"] == {"open": False}
        client.set_info("plant.v1", open=True)
        client.set_info("other.v9", open=True)  # not selected
        client.set_info("plant.v2", "valve", open=True)
        changes = [herald.InfoChange.from_delivered(d) for d in sub.wait_for(2, 10)]
        assert sub.pending() == 0
    assert [(c.reason, c.name, c.object["version"]) for c in changes if c] == [
        ("updated", "plant.v1", 2),
        ("created", "plant.v2", 1),
    ]


def test_info_subscription_with_a_callback(client: herald.Client) -> None:
    seen: List[str] = []
    done = threading.Event()

    def on_change(d: herald.Delivered) -> None:
        change = herald.InfoChange.from_delivered(d)
        assert change is not None
        seen.append(f"{change.reason} {change.name}")
        if len(seen) == 2:
            done.set()

    client.declare_type("lamp", [("on", "bool", "")])
    with client.subscribe_info(types="lamp", callback=on_change):
        client.set_info("hall.lamp", "lamp", on=True)
        client.set_info("hall.lamp", on=False)
        assert done.wait(10), seen
    assert seen == ["created hall.lamp", "updated hall.lamp"]


def test_info_subscription_with_a_bad_regex_is_refused(client: herald.Client) -> None:
    with pytest.raises(herald.ServerError) as err:
        client.subscribe_info("([")
    assert err.value.code == "bad_info"


def test_a_record_is_not_an_info_change() -> None:
    record = herald.Record(herald.Kind.LOG, "a.b", 1)
    assert herald.InfoChange.from_delivered(herald.Delivered(1, 1, record)) is None


def test_unknown_attribute_type_is_a_server_error(client: herald.Client) -> None:
    with pytest.raises(herald.ServerError) as err:
        client.declare_type("bad", [("x", "no_such_type", "")])
    assert err.value.code == "bad_info"


def test_samples_return_every_change(client: herald.Client) -> None:
    temps = [20.0, 21.0, 22.5, 19.0]
    start = sensor_history(client, temps)
    end = time.time_ns() + 1_000_000_000
    rows = retry(lambda: client.samples("room.a", start, end), lambda r: len(r) >= len(temps))
    assert [r["temp"] for r in rows] == temps
    assert all(r["subject"] == "room.a" and r["type"] == "sensor" for r in rows)
    seqs = [r["seq"] for r in rows]
    assert seqs == sorted(seqs)
    assert all(start <= r["time"] < end for r in rows)
    # datetimes work as well as nanoseconds
    as_dt = client.samples(
        "room.a",
        datetime.fromtimestamp(start / 1e9 - 1, timezone.utc),
        datetime.fromtimestamp(end / 1e9, timezone.utc),
    )
    assert [r["temp"] for r in as_dt] == temps
    with pytest.raises(ValueError):
        client.samples("room.a", datetime(2020, 1, 1), end)


def test_samples_page_through_the_cursor(client: herald.Client) -> None:
    import herald.archive as archive

    temps = [float(i) for i in range(7)]
    start = sensor_history(client, temps)
    end = time.time_ns() + 1_000_000_000
    retry(lambda: client.samples("room.a", start, end), lambda r: len(r) >= len(temps))
    old = archive.PAGE_LIMIT
    archive.PAGE_LIMIT = 2
    try:
        rows = client.samples("room.a", start, end)
    finally:
        archive.PAGE_LIMIT = old
    assert [r["temp"] for r in rows] == temps


def test_buckets_and_values_at(client: herald.Client) -> None:
    temps = [10.0, 20.0, 30.0]
    start = sensor_history(client, temps)
    end = time.time_ns() + 1_000_000_000
    retry(lambda: client.samples("room.a", start, end), lambda r: len(r) >= len(temps))
    buckets = client.buckets("room.a", start, end, 4, field="temp")
    assert sum(b["count"] for b in buckets) == 3
    stats = [b["fields"]["temp"] for b in buckets if b["count"]]
    assert min(s["min"] for s in stats) == 10.0
    assert max(s["max"] for s in stats) == 30.0
    one = client.buckets("room.a", start, end, 1)
    assert len(one) == 1
    assert one[0]["fields"]["temp"]["mean"] == pytest.approx(20.0)
    assert one[0]["fields"]["temp"]["first"] == 10.0
    assert one[0]["fields"]["temp"]["last"] == 30.0
    at = client.values_at(["room.a", "room.none"], end)
    assert at[0] is not None and at[0]["temp"] == 30.0
    assert at[1] is None
    assert client.values_at(["room.a"], start - 1) == [None]


def test_logs_with_filters(client: herald.Client) -> None:
    start = time.time_ns()
    client.log(Priority.WARNING, "app.disk", "disk almost full", free=3)
    client.log(Priority.INFO, "app.disk", "disk checked")
    client.log(Priority.ERROR, "app.net", "link down")
    client.log(Priority.NOTICE, "other.x", "noise")
    client.flush()
    end = time.time_ns() + 1_000_000_000
    every = retry(lambda: client.logs(start, end), lambda r: len(r) >= 4)
    assert [r["text"] for r in every] == ["disk almost full", "disk checked", "link down", "noise"]
    warn = client.logs(start, end, priority=">=WARNING")
    assert [r["text"] for r in warn] == ["disk almost full", "link down"]
    assert warn[0]["priority"] == Priority.WARNING and warn[0]["free"] == 3
    disk = client.logs(start, end, subject="app.disk")
    assert [r["text"] for r in disk] == ["disk almost full", "disk checked"]
    both = client.logs(start, end, priority=Priority.INFO, subject="app.*")
    assert [r["text"] for r in both] == ["disk checked"]


def test_query_with_empty_range_is_bad_query(client: herald.Client) -> None:
    now = time.time_ns()
    with pytest.raises(herald.ServerError) as err:
        client.samples("room.a", now, now)
    assert err.value.code == "bad_query"
    with pytest.raises(herald.ServerError) as err:
        client.logs(now, now - 1)
    assert err.value.code == "bad_query"


def test_request_answered_by_another_client(server: Server, client: herald.Client) -> None:
    with herald.connect(server.url, name="pytest-responder") as responder:
        seen: List[herald.Delivered] = []

        def answer(d: herald.Delivered) -> None:
            seen.append(d)
            responder.reply(d, text=d.text.upper(), fields={"n": d.fields["n"] * 2})
            responder.flush()

        responder.subscribe("svc.echo", callback=answer)
        for n in (1, 2):
            reply = client.request("svc.echo", text=f"hello {n}", fields={"n": n}, timeout=5.0)
            assert reply.text == f"HELLO {n}"
            assert reply.fields["n"] == 2 * n
            assert reply.record.id == seen[-1].record.id
            assert reply.subject == seen[-1].record.reply_to
            assert reply.subject.startswith("_INBOX.")
        assert seen[0].record.id != seen[1].record.id


def test_request_without_responder_times_out(client: herald.Client) -> None:
    with pytest.raises(herald.TimeoutError):
        client.request("svc.nobody", text="hi", timeout=0.3)


def test_reply_needs_reply_to(client: herald.Client) -> None:
    record = herald.Record(kind=herald.Kind.MESSAGE, subject="x", time=time.time_ns())
    with pytest.raises(ValueError):
        client.reply(record, "no")


def test_concurrent_requests(server: Server, client: herald.Client) -> None:
    with herald.connect(server.url, name="pytest-responder") as responder:
        responder.subscribe(
            "svc.add",
            callback=lambda d: (
                responder.reply(d, fields={"sum": d.fields["a"] + d.fields["b"]}),
                responder.flush(),
            ),
        )
        results: List[int] = []
        lock = threading.Lock()

        def ask(i: int) -> None:
            r = client.request("svc.add", fields={"a": i, "b": 100}, timeout=5.0)
            with lock:
                results.append(r.fields["sum"] - 100 - i)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [0] * 8
