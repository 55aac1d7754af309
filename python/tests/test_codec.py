"""Unit tests: priority sets, records, values and framing errors."""

from __future__ import annotations

import datetime as dt

import pytest

from herald import (
    DecodeError,
    FrameBuffer,
    FrameError,
    Kind,
    Origin,
    Priority,
    PrioritySet,
    Record,
    Time,
    decode_frame,
    encode_frame,
)
from herald.wire import frames as fr


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (">=WARNING", ["WARNING", "ERROR", "CRITICAL", "ALERT", "EMERGENCY"]),
        ("INFO..ERROR", ["INFO", "NOTICE", "WARNING", "ERROR"]),
        ("=DEBUG", ["DEBUG"]),
        ("debug", ["DEBUG"]),
        ("DEBUG,>=ERROR", ["DEBUG", "ERROR", "CRITICAL", "ALERT", "EMERGENCY"]),
        (">ERROR", ["CRITICAL", "ALERT", "EMERGENCY"]),
        ("<DEBUG", ["TRACE", "DELOUSE"]),
        ("<=2", ["TRACE", "DELOUSE"]),
        (" 8 .. 9 ", ["ERROR", "CRITICAL"]),
        ("==ALERT", ["ALERT"]),
    ],
)
def test_priority_set_parse(text: str, names: list[str]) -> None:
    assert PrioritySet.parse(text).names() == names


def test_priority_set_bits() -> None:
    assert PrioritySet.parse(">=WARNING").bits == 0x0F40
    assert PrioritySet.parse("=DEBUG").bits == 0x0008
    assert PrioritySet.parse("*").bits == 0x0F7E
    assert PrioritySet.parse("all").is_all()
    assert str(PrioritySet.parse("*")) == "*"
    assert str(PrioritySet.parse("DEBUG,ERROR")) == "DEBUG,ERROR"


@pytest.mark.parametrize("text", ["", "7", "0", "12", "NOPE", ">>", "=>INFO", "ERROR..INFO", ","])
def test_priority_set_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        PrioritySet.parse(text)


def _full_record() -> Record:
    return Record(
        kind=Kind.MESSAGE,
        subject="runcontrol.cmd",
        time=1763604000123456789,
        type="StartRun",
        priority=Priority.NOTICE,
        audience=["operator"],
        origin=Origin(host="ctl01", line=42, stack_level=0),
        text="Δt = 0.5 µs " + "x" * 300,
        fields={
            "i": -70000,
            "f": 3.0,
            "b": b"\x00\xff",
            "t": Time(-1),
            "l": [1, "two", [True]],
            "m": {"z": 1, "a": {"deep": 2.5}},
        },
        reply_to="_INBOX.x.1",
        id=0,
    )


def test_record_round_trip() -> None:
    record = _full_record()
    data = record.to_bytes()
    assert Record.from_bytes(data) == record
    assert Record.from_bytes(data).to_bytes() == data


def test_minimal_record_bytes() -> None:
    record = Record(kind=Kind.LOG, subject="x", time=1700000000000000000)
    assert record.to_bytes().hex() == "840000" + "01a178" + "03cf17979cfe362a0000" + "0404"


def test_record_refusals() -> None:
    with pytest.raises(DecodeError, match="missing required field `subject`"):
        Record.from_bytes(bytes.fromhex("8200000301"))
    with pytest.raises(DecodeError, match="unknown field 11"):
        Record.from_bytes(bytes.fromhex("810b00"))
    with pytest.raises(DecodeError, match="priority 7"):
        Record.from_bytes(bytes.fromhex("84000001a17803010407"))
    with pytest.raises(DecodeError, match="nil"):
        Record.from_bytes(bytes.fromhex("84000001a178030108" + "81a161c0"))
    with pytest.raises(ValueError):
        Record(kind=Kind.LOG, subject="a.*", time=0).to_bytes()


def test_time_and_datetime() -> None:
    when = dt.datetime(2025, 11, 20, 2, 0, tzinfo=dt.timezone.utc)
    t = Time.from_datetime(when)
    assert t.ns == 1763604000000000000
    assert t.to_datetime() == when
    record = Record(kind=Kind.LOG, subject="x", time=0, fields={"when": when})
    assert Record.from_bytes(record.to_bytes()).fields["when"] == t


def test_float_is_float64_and_ints_smallest() -> None:
    record = Record(kind=Kind.LOG, subject="x", time=0, fields={"f": 1.0, "n": 200, "m": -33})
    data = record.to_bytes()
    assert bytes.fromhex("cb3ff0000000000000") in data
    assert bytes.fromhex("a16eccc8") in data
    assert bytes.fromhex("a16dd0df") in data


def test_frame_buffer_errors() -> None:
    for head, message in [
        (b"\x00\x00\x00\x00", "empty frame"),
        (b"GET / HTTP/1.1\r\n", "HTTP"),
        (b"\x00\x20\x00\x00", "exceeds the maximum of 1048576"),
    ]:
        buffer = FrameBuffer()
        buffer.feed(head)
        with pytest.raises(FrameError, match=message):
            buffer.next_raw()


def test_decode_refusals() -> None:
    with pytest.raises(DecodeError, match="unknown frame type 0x55"):
        decode_frame(b"\x00\x00\x00\x01\x55")
    with pytest.raises(DecodeError, match="trailing"):
        decode_frame(b"\x00\x00\x00\x04\x22\x91\x02\x00")
    with pytest.raises(DecodeError, match="cid"):
        decode_frame(b"\x00\x00\x00\x03\x30\x91\x00")
    with pytest.raises(DecodeError, match="ack_id"):
        decode_frame(encode_frame(fr.Publish(0, fr.AckLevel.NONE))[:-2] + b"\x01\x90")


def test_ping() -> None:
    assert encode_frame(fr.Ping()) == b"\x00\x00\x00\x01\x40"
    assert isinstance(decode_frame(b"\x00\x00\x00\x01\x41"), fr.Pong)
