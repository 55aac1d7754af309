"""Unit tests: priority sets, records, values and framing errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import json
import types
from pathlib import Path

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
from herald.wire.msgpack_codec import HAVE_PACKER, pack
from herald.wire.template import RecordTemplate
from herald.wire.values import NotPlain


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


# ---- the packer fast path writes the reference Writer's bytes ------------------------------


def _records_for_the_fast_path() -> list[Record]:
    nested: dict = {"leaf": 1}
    for _ in range(30):  # fields at depth 1, then 30 maps: the deepest value is at depth 31
        nested = {"n": nested}
    return [
        Record(kind=Kind.LOG, subject="x", time=0),
        Record(kind=Kind.INFO, subject="a.b", time=-1, type="", text="", fields={}),
        Record(kind=Kind.MESSAGE, subject="a" * 1024, time=-(1 << 63), priority=Priority.TRACE),
        Record(kind=Kind.LOG, subject="ünï.cødé", time=(1 << 63) - 1, text="日本語 ✓ " * 40),
        _full_record(),
        Record(
            kind=Kind.LOG,
            subject="s",
            time=1,
            priority=6,  # a plain int is checked and written as the priority
            audience=["a", "ops", "x" * 40],
            origin=Origin(
                host="h",
                process="p[1]",
                thread="MainThread",
                file="/f.py",
                line=0,
                routine="r",
                context="c",
                stack_id="s",
                stack_level=7,
                log_id="l",
                uri="https://x",
            ),
        ),
        Record(kind=Kind.LOG, subject="s", time=2, origin=Origin(line=(1 << 32) - 1)),
        Record(kind=Kind.LOG, subject="s", time=3, origin=Origin(host="", stack_level=0)),
        Record(
            kind=Kind.LOG,
            subject="s",
            time=4,
            fields={
                "ints": [0, 1, 127, 128, 255, 256, 65535, 65536, (1 << 32) - 1, 1 << 32],
                "negative": [-1, -32, -33, -128, -129, -32768, -32769, -(1 << 31) - 1],
                "limits": [(1 << 63) - 1, -(1 << 63)],
                "floats": [0.0, -0.0, 1.5, 1e300, float("inf"), float("-inf"), float("nan")],
                "bools": [True, False],
                "bytes": [b"", b"\x00" * 300, b"\xff" * 70000],
                "strings": ["", "x" * 31, "x" * 32, "x" * 255, "x" * 256, "é" * 40000],
                "times": [Time(0), Time(-1), Time((1 << 63) - 1)],
                "tuple": (1, (2, 3)),
                "empty": [[], {}],
                "many": list(range(20)),
                "wide": {f"k{i}": i for i in range(20)},
                "deep": nested,
                "": "empty name",
            },
            reply_to="_INBOX.1",
            id=(1 << 64) - 1,
        ),
    ]


@pytest.mark.parametrize("record", _records_for_the_fast_path())
def test_fast_path_writes_the_reference_bytes(record: Record) -> None:
    assert HAVE_PACKER
    reference = record.to_bytes_reference()
    assert pack(record.plain()) == reference  # plain: no fallback to the Writer
    assert record.to_bytes() == reference
    assert Record.from_bytes(reference).to_bytes() == reference


@pytest.mark.parametrize("record", _records_for_the_fast_path())
def test_pure_python_msgpack_writes_the_same_bytes(record: Record) -> None:
    # Without msgpack's C extension, its pure-Python packer is used: same bytes.
    fallback = pytest.importorskip("msgpack.fallback")
    packer = fallback.Packer(use_bin_type=True, use_single_float=False, datetime=False)
    assert packer.pack(record.plain()) == record.to_bytes_reference()


class _Level(enum.IntEnum):
    HIGH = 3


class _Text(str):
    pass


@pytest.mark.parametrize(
    "fields",
    [
        {"when": dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)},
        {"b": bytearray(b"ab"), "m": memoryview(b"cd")},
        {"enum": _Level.HIGH, "text": _Text("t")},
        {"proxy": types.MappingProxyType({"a": 1})},
        {"deep": functools.reduce(lambda inner, _: [inner], range(40), [])},
    ],
)
def test_values_the_fast_path_leaves_to_the_writer(fields: dict) -> None:
    record = Record(kind=Kind.LOG, subject="s", time=0, fields=fields)
    with pytest.raises(NotPlain):
        record.plain()
    try:
        expected: object = record.to_bytes_reference()
    except (TypeError, ValueError) as err:
        expected = type(err)
    try:
        got: object = record.to_bytes()
    except (TypeError, ValueError) as err:
        got = type(err)
    assert got == expected


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"fields": {"big": 1 << 63}}, ValueError),
        ({"fields": {"none": None}}, ValueError),
        ({"fields": {1: "int name"}}, TypeError),
        ({"fields": {"obj": object()}}, TypeError),
        ({"fields": {"s": "\ud800"}}, UnicodeEncodeError),
        ({"time": 1 << 63}, ValueError),
        ({"priority": 7}, ValueError),
        ({"subject": "a.*"}, ValueError),
        ({"subject": ""}, ValueError),
        ({"reply_to": "bad*"}, ValueError),
        ({"origin": Origin(line=-1)}, ValueError),
        ({"id": -1}, ValueError),
    ],
)
def test_fast_path_refuses_what_the_writer_refuses(change: dict, error: type) -> None:
    record = dataclasses.replace(Record(kind=Kind.LOG, subject="s", time=0), **change)
    with pytest.raises(error):
        record.to_bytes_reference()
    with pytest.raises(error):
        record.to_bytes()


def test_origins_are_kept_by_value_and_type() -> None:
    # The origin cache must not answer for line 1.0 (refused) what it answered for line 1.
    assert Record(kind=Kind.LOG, subject="s", time=0, origin=Origin(line=1)).to_bytes()
    with pytest.raises(TypeError):
        Record(kind=Kind.LOG, subject="s", time=0, origin=Origin(line=1.0)).to_bytes()  # type: ignore[arg-type]
    origin = Origin(host="a")
    first = Record(kind=Kind.LOG, subject="s", time=0, origin=origin).to_bytes()
    origin.host = "b"
    second = Record(kind=Kind.LOG, subject="s", time=0, origin=origin).to_bytes()
    assert first != second and Record.from_bytes(second).origin.host == "b"


def test_every_vector_record_takes_the_fast_path() -> None:
    vectors = Path(__file__).resolve().parents[2] / "testdata" / "vectors"
    records = []
    for path in sorted(vectors.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            try:
                frame = decode_frame(bytes.fromhex(case["hex"]))
            except DecodeError:
                continue  # the error vectors
            if isinstance(frame, fr.Publish):
                records += frame.records
            elif isinstance(frame, fr.Deliver):
                records += [entry.record for entry in frame.entries]
    assert len(records) >= 5
    for record in records:
        assert pack(record.plain()) == record.to_bytes_reference()


@pytest.mark.parametrize(
    ("time", "text", "fields"),
    [
        (0, "", None),
        (1763604000123456789, "message 5", None),
        (-1, "Δ" * 100, {"n": 1, "l": [Time(5), b"x"]}),
        (1 << 40, "", {"when": dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)}),  # not plain
    ],
)
def test_record_template_packs_the_record(time: int, text: str, fields: dict) -> None:
    origin = Origin(host="h", process="p[1]", thread="t", file="/f.py", line=3, routine="f")
    template = RecordTemplate(Kind.LOG, "app.web", Priority.WARNING, origin)
    origin.host = "changed"  # the template keeps its own copy
    record = template.record(time, text, fields)
    assert record.origin.host == "h"
    assert template.pack(time, text, fields) == record.to_bytes_reference()


def test_record_template_refuses_what_the_record_refuses() -> None:
    with pytest.raises(ValueError):
        RecordTemplate(Kind.LOG, "a.*", Priority.INFO, Origin())
    template = RecordTemplate(Kind.LOG, "s", Priority.INFO, Origin())
    with pytest.raises(ValueError):
        template.pack(1 << 63, "x")
    with pytest.raises(ValueError):
        template.pack(0, "x", {"none": None})


def test_without_msgpack_the_writer_does_it_all(monkeypatch: pytest.MonkeyPatch) -> None:
    import herald.wire.record as record_module
    import herald.wire.template as template_module

    monkeypatch.setattr(record_module, "HAVE_PACKER", False)
    monkeypatch.setattr(template_module, "HAVE_PACKER", False)
    for record in _records_for_the_fast_path():
        assert record.to_bytes() == record.to_bytes_reference()
    template = RecordTemplate(Kind.LOG, "s", Priority.INFO, Origin(host="h", line=1))
    assert template.pack(5, "x", {"a": 1}) == template.record(5, "x", {"a": 1}).to_bytes_reference()
