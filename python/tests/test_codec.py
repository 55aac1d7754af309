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
from conftest import CraftedRecord, bad_record

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
from herald.wire.archive import AtValues, StoredRecord
from herald.wire.info import InfoReply, ObjectData, TypeData
from herald.wire.msgpack_codec import HAVE_PACKER, I64_MAX, Reader, Writer, pack
from herald.wire.record import UndecodableRecord, decode_record_or_skip
from herald.wire.template import RecordTemplate
from herald.wire.values import IntRangeError, NotPlain


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
    # An exact set in braces, as the server and the Rust client read it.
    assert PrioritySet.parse("{DEBUG}").bits == 0x0008
    assert PrioritySet.parse("{DEBUG,ERROR}").bits == PrioritySet.parse("DEBUG,ERROR").bits


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
        ({"fields": {"big": 1 << 64}}, ValueError),
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


# ---- ints outside -2^63..2^64-1 are refused at the call, naming the field -------------------


@pytest.mark.parametrize(
    ("fields", "path", "value"),
    [
        ({"counter": 1 << 64}, "counter", 1 << 64),
        ({"ok": 1, "big": 1 << 65}, "big", 1 << 65),
        ({"low": -(1 << 63) - 1}, "low", -(1 << 63) - 1),
        ({"stats": {"max": 1 << 70}}, "stats.max", 1 << 70),
        ({"samples": [0, (1 << 64) - 1, 1 << 64]}, "samples[2]", 1 << 64),
        ({"m": [{"a": [1 << 64]}]}, "m[0].a[0]", 1 << 64),
        ({"enum": [_Level.HIGH, (1 << 64)]}, "enum[1]", 1 << 64),  # not plain: the Writer
    ],
)
def test_an_int_outside_the_integer_range_is_refused_naming_the_field(
    fields: dict, path: str, value: int
) -> None:
    record = Record(kind=Kind.LOG, subject="s", time=0, fields=fields)
    template = RecordTemplate(Kind.LOG, "s", Priority.INFO, Origin())
    for encode in (
        record.to_bytes,
        record.to_bytes_reference,
        lambda: template.pack(0, "", fields),
    ):
        with pytest.raises(IntRangeError) as caught:
            encode()
        assert isinstance(caught.value, ValueError)
        assert (caught.value.path, caught.value.value) == (path, value)
        assert str(caught.value) == (
            f"field `{path}` holds {value}, outside the integer range -2^63..2^64-1"
        )


@pytest.mark.parametrize("value", [(1 << 63), (1 << 64) - 1, I64_MAX, -(1 << 63), 0])
def test_unsigned_64_bit_values_round_trip_in_every_encoder(value: int) -> None:
    fields = {"n": value, "nested": {"list": [value, 1]}}
    record = Record(kind=Kind.LOG, subject="s", time=0, fields=fields)
    template = RecordTemplate(Kind.LOG, "s", Priority.INFO, Origin())
    data = record.to_bytes()
    assert record.to_bytes_reference() == data
    assert Record.from_bytes(data).fields == fields
    assert Record.from_bytes(template.pack(0, "", fields)).fields == fields
    if value > I64_MAX:
        assert bytes([0xCF]) + value.to_bytes(8, "big") in data


def test_a_field_that_does_not_decode_is_named() -> None:
    w = Writer()
    w.map_len(4)
    for key, number in ((0, 0), (3, 0), (4, 4)):
        w.uint(key)
        w.uint(number)
    w.uint(1)
    w.string("s")
    data = w.getvalue()
    w = Writer()
    w.uint(8)
    w.map_len(1)
    w.string("counter")
    w.raw(bytes.fromhex("d6ff00000001"))  # MessagePack's timestamp, not Herald's time
    with pytest.raises(DecodeError, match=r"field `counter`: MessagePack extension type -1"):
        Record.from_bytes(bytes([data[0] + 1]) + data[1:] + w.getvalue())


def test_origin_numbers_are_u64_as_in_rust() -> None:
    record = Record(
        kind=Kind.LOG, subject="s", time=0, origin=Origin(line=1 << 40, stack_level=(1 << 64) - 1)
    )
    assert Record.from_bytes(record.to_bytes()) == record


# ---- a record that does not decode is stepped over -----------------------------------------


# One value of each MessagePack form: ints, nil, booleans, floats, strings, bytes, fixext and
# ext (Herald's time and others), arrays and maps, nested.
_EVERY_FORM = """
    00 7f e0 ff c0 c2 c3 cc01 cd0102 ce01020304 cf0102030405060708 d001 d10102 d201020304
    d30102030405060708 ca3fc00000 cb3ff0000000000000 a0 a3616263 d903616263 da0003616263
    db00000003616263 c403010203 c50003010203 c600000003010203 d40501 d5050102 d60501020304
    d7010000000000000001 d80500000000000000000000000000000000 c70205aabb c8000205aabb
    c900000002ffaabb 90 9201c0 dc000201c0 dd0000000201c0 80 81a16101 de0001a16192c0c3
    df00000001a16181a162c0
""".split()


@pytest.mark.parametrize("value", _EVERY_FORM)
def test_skip_value_steps_over_every_form(value: str) -> None:
    data = bytes.fromhex(value)
    r = Reader(data + b"\x2a")
    r.skip_value()
    assert r.pos == len(data)


@pytest.mark.parametrize("value", ["c1", "a36162", "92c0", "dcffff", "dd7fffffff01", "cf01"])
def test_skip_value_refuses_what_is_not_one_value(value: str) -> None:
    with pytest.raises(DecodeError):
        Reader(bytes.fromhex(value)).skip_value()


def _bad_record() -> bytes:
    """A record whose field holds a value of no Herald type (an extension of type 5)."""
    return bad_record("s", kind=Kind.LOG, time_ns=0, field="c")


def test_decode_record_or_skip() -> None:
    good = Record(kind=Kind.LOG, subject="s", time=0).to_bytes()
    r = Reader(_bad_record() + good)
    skipped = decode_record_or_skip(r)
    assert isinstance(skipped, UndecodableRecord)
    assert skipped.data == _bad_record() and "field `c`" in skipped.reason
    assert decode_record_or_skip(r) == Record(kind=Kind.LOG, subject="s", time=0)
    assert r.is_empty()
    with pytest.raises(DecodeError):
        decode_record_or_skip(Reader(b"\xc1"))  # not even a value: the stream is lost


def _deliver(records: list) -> bytes:
    """A DELIVER frame of records given as bytes, for subscription 1 (seq and received 1, 2,
    …)."""
    entries = [
        fr.DeliverEntry(1, seq, seq, CraftedRecord(data)) for seq, data in enumerate(records, 1)
    ]
    return encode_frame(fr.Deliver(entries))


def test_deliver_keeps_the_entries_that_decode() -> None:
    good = Record(kind=Kind.LOG, subject="s", time=0).to_bytes()
    frame = decode_frame(_deliver([good, _bad_record(), good]))
    assert isinstance(frame, fr.Deliver)
    assert [e.seq for e in frame.entries] == [1, 3]
    (skipped,) = frame.undecodable
    assert (skipped.subscription, skipped.seq, skipped.received) == (1, 2, 2)
    assert skipped.record.data == _bad_record()
    with pytest.raises(DecodeError):
        decode_frame(_deliver([good, b"\xc1"]))  # where the next entry starts is lost


def test_at_values_turn_an_undecodable_record_into_none() -> None:
    good = Record(kind=Kind.LOG, subject="s", time=0)
    bad = StoredRecord(1, 1, CraftedRecord(_bad_record()))
    frame = decode_frame(
        encode_frame(fr.QueryReply(7, AtValues([bad, None, StoredRecord(2, 2, good)])))
    )
    assert isinstance(frame, fr.QueryReply) and isinstance(frame.reply, AtValues)
    assert frame.reply.values == [None, None, StoredRecord(2, 2, good)]
    assert [u.data for u in frame.reply.undecodable] == [_bad_record()]


def test_info_reply_parts_carry_a_third_element_only_when_more_follow() -> None:
    obj = ObjectData("Run.Info", "RunInfo", 5, 1, {"run": 42})
    part = fr.InfoReplyFrame(7, InfoReply([obj], []), more=True)
    data = encode_frame(part)
    # [cid 7, [[object], []], true]: an array of 3 whose last element is `true`.
    assert data[5:7] == b"\x93\x07" and data[-1:] == b"\xc3"
    assert decode_frame(data) == part
    last = fr.InfoReplyFrame(7, InfoReply([None], [TypeData("RunInfo")]))
    data = encode_frame(last)
    assert data[5:7] == b"\x92\x07" and data[-1:] != b"\xc3"
    assert decode_frame(data) == last and last.more is False
    # A third element `false` reads as a last part (writers leave it out).
    body = data[5:]
    explicit = fr.decode_body(fr.FrameType.INFO_REPLY, b"\x93" + body[1:] + b"\xc2")
    assert isinstance(explicit, fr.InfoReplyFrame) and explicit == last
    for bad, words in [
        (b"\x91\x07", "array of 2 or 3, found 1"),
        (b"\x94" + body[1:] + b"\xc3\xc3", "array of 2 or 3, found 4"),
        (b"\x93" + body[1:] + b"\x01", "bool"),
    ]:
        with pytest.raises(DecodeError, match=words):
            fr.decode_body(fr.FrameType.INFO_REPLY, bad)
    joined = InfoReply([obj], [])
    joined.extend(InfoReply([None], [TypeData("RunInfo")]))
    assert joined == InfoReply([obj, None], [TypeData("RunInfo")])


def test_a_gap_may_name_the_cluster_member_whose_route_lost_the_records() -> None:
    local = fr.Gap(1, 3, 7, 9, [(Priority.INFO, 3)])
    remote = fr.Gap(1, 2, 40, 41, [(Priority.DEBUG, 2)], member="b")
    assert decode_frame(encode_frame(local)) == local
    assert decode_frame(encode_frame(remote)) == remote
    # Five elements without the member, six with it; nothing else.
    assert encode_frame(local)[5] == 0x95 and encode_frame(remote)[5] == 0x96
    with pytest.raises(DecodeError, match="GAP must be an array of 5 or 6"):
        decode_frame(b"\x00\x00\x00\x06\x13\x94\x01\x01\x01\x01")
