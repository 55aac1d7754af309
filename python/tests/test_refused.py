"""What the server refuses and what the client refuses before sending, against a real
`herald serve`: a bad record among good ones is refused alone (ServerError bad_record to a
caller that waits, a warning otherwise, counted in refused_records) and the connection lives
on; a record too large for a frame or an int outside i64 is refused at the call and never
sent; a record that does not decode is skipped by the reader, not fatal."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Tuple

import pytest
from conftest import CraftedRecord, Server, bad_record, wait_until

import herald
from herald import Kind, Priority, Record
from herald.archive import ArchiveMixin
from herald.connection import _is_final
from herald.wire.archive import Cursor, Page, StoredRecord
from herald.wire.frames import (
    Deliver,
    DeliverEntry,
    Error,
    QueryReply,
    decode_frame,
    encode_frame,
)


@pytest.fixture
def client(server: Server) -> Iterator[herald.Client]:
    with herald.connect(server.url, name="refused-client") as c:
        yield c


def closes(client: herald.Client) -> dict:
    """The server's count of closed connections by reason, without the zeros."""
    return {reason: n for reason, n in client.monitor()["closes"].items() if n}


# ---- a bad record among good ones (the server refuses it alone) ----------------------------


def test_a_bad_record_among_good_ones_is_refused_alone(
    server: Server, client: herald.Client
) -> None:
    connection = client.connection_id
    with herald.connect(server.url, name="reader") as reader:
        sub = reader.subscribe("mixed.*")
        with client._conn._lock:  # one batch: the writer thread cannot send a part meanwhile
            client.publish("mixed.good", text="first")
            client._conn.add_record(bad_record("mixed.bad"))
            client.publish("mixed.good", text="second")
        with pytest.raises(herald.ServerError) as caught:
            client.flush()
        assert caught.value.code == "bad_record"
        assert "refused 1 of 3 records; record 1" in caught.value.message
        assert "counter" in caught.value.message
        got = sub.wait_for(2, timeout=10)
        assert [d.text for d in got] == ["first", "second"]
        with pytest.raises(herald.TimeoutError):
            sub.next(0.3)
    assert client.refused_records == 1
    assert client._conn.unacked() == 0, "the ACK released the frame: it is never resent"
    assert client.failovers == 0 and not client.closed
    assert client.connection_id == connection
    data = client.monitor()
    assert data["refused_records"] == 1
    assert "protocol_error" not in closes(client)
    client.flush()  # the next flush is clean


def test_sync_send_of_a_bad_record_raises_bad_record(client: herald.Client) -> None:
    with client.subscribe("sync.*") as sub:
        crafted = CraftedRecord(bad_record("sync.bad", priority=7), "sync.bad")
        with pytest.raises(herald.ServerError) as caught:
            client.sync_send(crafted)
        assert caught.value.code == "bad_record"
        assert "priority 7" in caught.value.message
        assert client.refused_records == 1
        good = Record(Kind.MESSAGE, "sync.good", time.time_ns(), text="fine")
        assert client.sync_send(good).count == 1
        got = sub.next(10)
        assert got is not None and got.text == "fine"
    with pytest.raises(herald.ServerError, match="bad_record"):
        client.sync_send(crafted, level="stored")
    assert client.refused_records == 2
    assert client.failovers == 0 and not client.closed


def test_a_refused_batch_nobody_waits_for_is_logged_once(
    client: herald.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="herald")
    good = Record(Kind.MESSAGE, "quiet.good", time.time_ns(), text="1").to_bytes()
    # One frame, sent at once; nobody waits for its ACK.
    client.publish_encoded([good, bad_record("quiet.bad"), bad_record("quiet.bad", priority=7)])
    wait_until(lambda: client.refused_records == 2, 10, "the ACK counting 1 of 3")
    warnings = [r for r in caplog.records if "refused records" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
    assert warnings[0].name.startswith("herald")
    assert "refused 2 of 3 records" in warnings[0].getMessage()
    client.flush()  # a later frame is not refused
    assert client.monitor()["records_in"] == 1
    assert client.failovers == 0 and not client.closed


def test_refused_records_are_not_resent_after_a_failover(tmp_path: Path) -> None:
    a = Server(tmp_path / "a")
    b = Server(tmp_path / "b")
    try:
        with herald.connect(f"herald://{a.address},{b.address}", name="writer") as writer:
            good = Record(Kind.MESSAGE, "moved.good", time.time_ns(), text="1").to_bytes()
            writer.publish_encoded([good, bad_record("moved.bad")])
            wait_until(lambda: writer.refused_records == 1, 10, "the refusal and its ACK")
            a.stop()
            wait_until(lambda: writer.failovers == 1, 10, "failover to the second server")
            writer.flush()
            assert writer.monitor()["records_in"] == 0, "nothing was resent to B"
            assert writer.refused_records == 1
    finally:
        a.stop()
        b.stop()


def test_an_error_nobody_waits_for_does_not_end_the_connection(
    client: herald.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="herald")
    # As the reader thread would handle them: answers to nothing this client waits for.
    client._conn._handle(Error(987654, "bad_request", "malformed MONITOR frame: …"))
    client._conn._handle(Error(987655, "bad_record", "refused 1 of 1 records; …"))
    client._conn._handle(Error(987656, "some_new_code", "from a newer server"))
    assert not client.closed
    # With cid 0 (for the connection as a whole) bad_request is final: another server would
    # only repeat it, so the client closes rather than failing over. The others are not.
    assert _is_final(herald.ServerError("bad_request", "malformed MONITOR frame: …"))
    assert not _is_final(herald.ServerError("bad_record", "refused 1 of 1 records; …"))
    assert not _is_final(herald.ServerError("some_new_code", "from a newer server"))
    assert client.monitor()["server"]
    messages = [r.getMessage() for r in caplog.records]
    assert any("bad_request" in m for m in messages)
    assert any("some_new_code" in m for m in messages)


# ---- refused at the call, never sent -------------------------------------------------------


def _record_of(size: int, subject: str = "big.one") -> Record:
    """A record whose encoding is exactly ``size`` bytes (a long text makes it up)."""
    base = len(Record(Kind.MESSAGE, subject, 1, text="x" * 70000).to_bytes()) - 70000
    record = Record(Kind.MESSAGE, subject, 1, text="x" * (size - base))
    assert len(record.to_bytes()) == size
    return record


def test_an_oversized_record_is_refused_at_the_call(client: herald.Client) -> None:
    largest = client.max_record_bytes
    assert largest == client.max_frame_bytes - 32
    too_big = _record_of(largest + 1)
    calls: List[Callable[[], Any]] = [
        lambda: client.publish_record(too_big),
        lambda: client.publish("big.one", text=too_big.text),
        lambda: client.log(Priority.WARNING, "big.one", too_big.text),
        lambda: client.sync_send(too_big),
        lambda: client.request("big.one", text=too_big.text, timeout=1),
    ]
    for call in calls:
        with pytest.raises(herald.RecordTooLargeError) as caught:
            call()
        error = caught.value
        assert isinstance(error, ValueError)
        assert error.max == largest and error.size > largest and error.subject == "big.one"
        assert f"of {error.size} bytes" in str(error) and str(largest) in str(error)
        assert "`big.one`" in str(error)
    client.flush()
    # The largest record that fits goes through, alone in its frame.
    with client.subscribe("big.*") as sub:
        assert client.sync_send(_record_of(largest)).count == 1
        got = sub.next(10)
        assert got is not None and len(got.text) == len(too_big.text) - 1
    # Before, the record went out, the server closed the connection (frame_too_large) and
    # the client resent it after every reconnect: now the connection never dropped.
    assert client.failovers == 0 and not client.closed
    data = client.monitor()
    assert data["connections_total"] == 1
    assert data["records_in"] == 1
    assert closes(client) == {}


def test_publish_encoded_refuses_what_does_not_fit_one_frame(client: herald.Client) -> None:
    largest = client.max_record_bytes
    with pytest.raises(herald.RecordTooLargeError, match="`big.one`"):
        client.publish_encoded([_record_of(largest + 1).to_bytes()])
    half = _record_of(largest // 2 + 1).to_bytes()
    with pytest.raises(ValueError, match="do not fit one PUBLISH frame"):
        client.publish_encoded([half, half])
    client.publish_encoded([half])
    client.flush()
    assert client.monitor()["records_in"] == 1
    assert client.failovers == 0


def test_an_out_of_range_int_is_refused_at_the_call(client: herald.Client) -> None:
    with pytest.raises(herald.IntRangeError) as caught:
        client.publish("ints.x", fields={"counter": 1 << 64})
    assert isinstance(caught.value, ValueError)
    assert str(caught.value) == (
        "field `counter` holds 18446744073709551616, outside the integer range -2^63..2^64-1"
    )
    with pytest.raises(herald.IntRangeError, match=r"field `stats\.samples\[2\]` holds -9"):
        client.log(Priority.INFO, "ints.x", stats={"samples": [1, 2, -(1 << 63) - 1]})
    with pytest.raises(herald.IntRangeError, match="field `n` holds 18446744073709551616"):
        client.sync_send(Record(Kind.MESSAGE, "ints.x", 1, fields={"n": 1 << 64}))
    with pytest.raises(herald.IntRangeError):
        client.request("ints.x", fields={"big": 1 << 70}, timeout=1)
    client.publish("ints.x", fields={"edge": [(1 << 63) - 1, -(1 << 63), (1 << 64) - 1]})
    client.flush()
    data = client.monitor()
    assert data["records_in"] == 1 and data["refused_records"] == 0


# ---- the reader skips what it cannot decode ------------------------------------------------


def deliver_frame(entries: List[Tuple[int, int, bytes]]) -> bytes:
    """A DELIVER frame of (subscription, seq, record bytes) entries."""
    return encode_frame(
        Deliver(
            [
                DeliverEntry(subscription, seq, time.time_ns(), CraftedRecord(data))
                for subscription, seq, data in entries
            ]
        )
    )


def test_an_undecodable_delivery_is_skipped_and_counted(
    client: herald.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="herald")
    sub = client.subscribe("never.matched")
    good = Record(Kind.MESSAGE, "s.good", 1, text="ok").to_bytes()
    newer = bytes([good[0] + 1]) + good[1:] + b"\x0b\x01"  # a newer server's key 11
    frame = decode_frame(
        deliver_frame(
            [
                (sub.id, 1, good),
                (sub.id, 2, bad_record("s.bad")),
                (sub.id, 3, newer),
                (sub.id, 4, good),
                (sub.id + 99, 5, bad_record("s.other")),  # no such subscription: ignored
            ]
        )
    )
    client._conn._handle(frame)  # as the reader thread handles it
    assert [d.seq for d in sub.wait_for(2, timeout=1)] == [1, 4]
    assert sub.undecodable == 2
    warnings = [r.getMessage() for r in caplog.records if "does not decode" in r.getMessage()]
    assert len(warnings) == 1 and "counter" in warnings[0]
    assert not sub.closed and not client.closed
    client.publish("never.matched", text="live")
    got = sub.next(10)
    assert got is not None and got.text == "live", "the subscription goes on"
    sub.close()


class _FakeConnection:
    """Answers QUERY requests with the frames given, one per request."""

    def __init__(self, replies: List[bytes]) -> None:
        self.replies = replies
        self.archive_skipped = 0

    def request(self, frame_for: Any, timeout: Optional[float], what: str) -> Any:
        reply = decode_frame(self.replies.pop(0))
        assert isinstance(reply, QueryReply)
        return reply

    def count_archive_skipped(self, count: int) -> None:
        self.archive_skipped += count


def page_reply(records: List[bytes], next_cursor: Optional[Cursor], skipped: int = 0) -> bytes:
    """A QUERY_REPLY page of stored records (seq 1, 2, …) given as bytes, with the count of
    records the server's archive left out when ``skipped``."""
    stored = [StoredRecord(seq, seq, CraftedRecord(data)) for seq, data in enumerate(records, 1)]
    return encode_frame(QueryReply(1, Page(stored, next_cursor), skipped))


def test_an_undecodable_archived_record_is_skipped_not_the_query(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="herald")
    good = Record(Kind.INFO, "A.x", 5, fields={"v": 1}).to_bytes()
    bad = bad_record("A.x")
    # The first page holds nothing decodable here, the second nothing at all (the server
    # stopped at its scan budget: an empty page with a cursor means keep asking), the third
    # nothing the server's archive could decode: paging must go on to the fourth.
    replies = [
        page_reply([bad], Cursor(5, 1)),
        page_reply([], Cursor(5, 2)),
        page_reply([], Cursor(5, 4), skipped=3),
        page_reply([good, bad, good], None),
    ]
    archive = ArchiveMixin()
    fake = _FakeConnection(replies)
    archive._conn = fake  # type: ignore[assignment]
    rows = archive.samples("A.x", 0, 10)
    assert [row["v"] for row in rows] == [1, 1]
    assert fake.archive_skipped == 5
    warnings = [r.getMessage() for r in caplog.records if "do not decode" in r.getMessage()]
    assert len(warnings) == 1 and "samples of `A.x`" in warnings[0]
    assert "field `counter`" in warnings[0]
    page = decode_frame(page_reply([good, bad], None))
    assert isinstance(page, QueryReply) and isinstance(page.reply, Page)
    assert len(page.reply.records) == 1 and len(page.reply.undecodable) == 1
