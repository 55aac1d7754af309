"""Archive queries and answers (``QUERY``/``QUERY_REPLY``, docs/protocol.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from .msgpack_codec import DecodeError, Reader, Writer
from .priority import PrioritySet
from .record import Record, UndecodableRecord, decode_record_or_skip
from .values import value_from_json, value_to_json


@dataclass(frozen=True)
class Cursor:
    """The next page starts strictly after ``(time, seq)``."""

    time: int
    seq: int

    def to_json(self) -> Dict[str, Any]:
        return {"time": self.time, "seq": self.seq}


def _write_cursor(w: Writer, cursor: Optional[Cursor]) -> None:
    if cursor is None:
        w.nil()
    else:
        w.array_len(2)
        w.sint(cursor.time)
        w.uint(cursor.seq)


def _read_cursor(r: Reader) -> Optional[Cursor]:
    if r.read_nil():
        return None
    r.expect_array("cursor", 2)
    return Cursor(r.read_int(), r.read_uint())


def _cursor_json(cursor: Optional[Cursor]) -> Optional[Dict[str, Any]]:
    return None if cursor is None else cursor.to_json()


def _cursor_from_json(m: Optional[Dict[str, Any]]) -> Optional[Cursor]:
    return None if m is None else Cursor(m["time"], m["seq"])


@dataclass
class SamplesQuery:
    name: str
    from_: int
    to: int
    after: Optional[Cursor] = None
    limit: int = 1000


@dataclass
class BucketsQuery:
    name: str
    from_: int
    to: int
    buckets: int
    field: Optional[str] = None


@dataclass
class LogsQuery:
    from_: int
    to: int
    priorities: PrioritySet = field(default_factory=PrioritySet)
    subject: Optional[str] = None
    host: Optional[str] = None
    process: Optional[str] = None
    text: Optional[str] = None
    after: Optional[Cursor] = None
    limit: int = 1000


@dataclass
class AtQuery:
    names: List[str]
    time: int


ArchiveRequest = Union[SamplesQuery, BucketsQuery, LogsQuery, AtQuery]


def encode_archive_request(w: Writer, q: ArchiveRequest) -> None:
    w.array_len(2)
    if isinstance(q, SamplesQuery):
        w.uint(0)
        w.array_len(5)
        w.string(q.name)
        w.sint(q.from_)
        w.sint(q.to)
        _write_cursor(w, q.after)
        w.uint(q.limit)
    elif isinstance(q, BucketsQuery):
        w.uint(1)
        w.array_len(5)
        w.string(q.name)
        w.sint(q.from_)
        w.sint(q.to)
        w.uint(q.buckets)
        w.opt_str(q.field)
    elif isinstance(q, LogsQuery):
        w.uint(2)
        w.array_len(9)
        w.sint(q.from_)
        w.sint(q.to)
        w.uint(q.priorities.bits)
        for text in (q.subject, q.host, q.process, q.text):
            w.opt_str(text)
        _write_cursor(w, q.after)
        w.uint(q.limit)
    else:
        w.uint(3)
        w.array_len(2)
        w.array_len(len(q.names))
        for name in q.names:
            w.string(name)
        w.sint(q.time)


def decode_archive_request(r: Reader) -> ArchiveRequest:
    r.expect_array("archive request", 2)
    op = r.read_uint()
    if op == 0:
        r.expect_array("samples query", 5)
        return SamplesQuery(
            r.read_str(), r.read_int(), r.read_int(), _read_cursor(r), r.read_u32("limit")
        )
    if op == 1:
        r.expect_array("buckets query", 5)
        return BucketsQuery(
            r.read_str(), r.read_int(), r.read_int(), r.read_u32("buckets"), r.opt_str()
        )
    if op == 2:
        r.expect_array("logs query", 9)
        from_, to = r.read_int(), r.read_int()
        bits = r.read_uint()
        if bits > 0xFFFF:
            raise DecodeError(f"invalid priorities: {bits} is not a priority mask")
        priorities = PrioritySet(bits)
        subject, host, process, text = r.opt_str(), r.opt_str(), r.opt_str(), r.opt_str()
        return LogsQuery(
            from_,
            to,
            priorities,
            subject,
            host,
            process,
            text,
            _read_cursor(r),
            r.read_u32("limit"),
        )
    if op == 3:
        r.expect_array("at query", 2)
        names = [r.read_str() for _ in range(r.read_array_len())]
        return AtQuery(names, r.read_int())
    raise DecodeError(f"invalid archive query operation {op}")


def archive_request_to_json(q: ArchiveRequest) -> Dict[str, Any]:
    if isinstance(q, SamplesQuery):
        return {
            "op": "samples",
            "name": q.name,
            "from": q.from_,
            "to": q.to,
            "after": _cursor_json(q.after),
            "limit": q.limit,
        }
    if isinstance(q, BucketsQuery):
        return {
            "op": "buckets",
            "name": q.name,
            "from": q.from_,
            "to": q.to,
            "buckets": q.buckets,
            "field": q.field,
        }
    if isinstance(q, LogsQuery):
        return {
            "op": "logs",
            "from": q.from_,
            "to": q.to,
            "priority_bits": q.priorities.bits,
            "priorities": q.priorities.names(),
            "subject": q.subject,
            "host": q.host,
            "process": q.process,
            "text": q.text,
            "after": _cursor_json(q.after),
            "limit": q.limit,
        }
    return {"op": "at", "names": list(q.names), "time": q.time}


def archive_request_from_json(m: Dict[str, Any]) -> ArchiveRequest:
    op = m["op"]
    if op == "samples":
        after = _cursor_from_json(m["after"])
        return SamplesQuery(m["name"], m["from"], m["to"], after, m["limit"])
    if op == "buckets":
        return BucketsQuery(m["name"], m["from"], m["to"], m["buckets"], m["field"])
    if op == "logs":
        return LogsQuery(
            m["from"],
            m["to"],
            PrioritySet(m["priority_bits"]),
            m["subject"],
            m["host"],
            m["process"],
            m["text"],
            _cursor_from_json(m["after"]),
            m["limit"],
        )
    if op == "at":
        return AtQuery(list(m["names"]), m["time"])
    raise ValueError(f"unknown query op {op!r}")


@dataclass
class StoredRecord:
    """An archived record: the server's sequence number and receive time, and the record."""

    seq: int
    received: int
    record: Record

    def encode(self, w: Writer) -> None:
        w.array_len(3)
        w.uint(self.seq)
        w.sint(self.received)
        self.record.encode(w)

    @classmethod
    def decode_or_skip(cls, r: Reader) -> Union[StoredRecord, UndecodableRecord]:
        """Decodes a stored record; one whose record does not decode is stepped over and
        returned as an UndecodableRecord."""
        r.expect_array("stored record", 3)
        seq, received = r.read_uint(), r.read_int()
        record = decode_record_or_skip(r)
        if isinstance(record, UndecodableRecord):
            return record
        return cls(seq, received, record)

    def to_json(self) -> Dict[str, Any]:
        return {"seq": self.seq, "received": self.received, "record": self.record.to_json()}

    @classmethod
    def from_json(cls, m: Dict[str, Any]) -> StoredRecord:
        return cls(m["seq"], m["received"], Record.from_json(m["record"]))


@dataclass
class FieldStats:
    name: str
    count: int
    min: float
    max: float
    mean: float
    first: float
    last: float


@dataclass
class Bucket:
    start: int
    end: int
    count: int
    fields: List[FieldStats] = field(default_factory=list)


@dataclass
class Page:
    records: List[StoredRecord] = field(default_factory=list)
    next: Optional[Cursor] = None
    # Stored records that do not decode (an old archive, a newer server): skipped, so that
    # one of them does not fail the whole query. Not encoded.
    undecodable: List[UndecodableRecord] = field(default_factory=list)

    def extend(self, part: ArchiveReply) -> None:
        """Appends the next part of the same answer (a page is never split, but joining two
        reads as one longer page)."""
        if isinstance(part, Page):
            self.records.extend(part.records)
            self.undecodable.extend(part.undecodable)
            self.next = part.next


@dataclass
class Buckets:
    buckets: List[Bucket] = field(default_factory=list)

    def extend(self, part: ArchiveReply) -> None:
        """Appends the next part of an answer that came in parts."""
        if isinstance(part, Buckets):
            self.buckets.extend(part.buckets)


@dataclass
class AtValues:
    values: List[Optional[StoredRecord]] = field(default_factory=list)
    # As in Page: a value whose record does not decode is None in ``values`` and kept here.
    undecodable: List[UndecodableRecord] = field(default_factory=list)

    def extend(self, part: ArchiveReply) -> None:
        """Appends the next part of an answer that came in parts."""
        if isinstance(part, AtValues):
            self.values.extend(part.values)
            self.undecodable.extend(part.undecodable)


ArchiveReply = Union[Page, Buckets, AtValues]
_STATS = ("min", "max", "mean", "first", "last")


def encode_archive_reply(w: Writer, reply: ArchiveReply) -> None:
    w.array_len(2)
    if isinstance(reply, Page):
        w.uint(0)
        w.array_len(2)
        w.array_len(len(reply.records))
        for stored in reply.records:
            stored.encode(w)
        _write_cursor(w, reply.next)
    elif isinstance(reply, Buckets):
        w.uint(1)
        w.array_len(len(reply.buckets))
        for b in reply.buckets:
            w.array_len(4)
            w.sint(b.start)
            w.sint(b.end)
            w.uint(b.count)
            w.array_len(len(b.fields))
            for s in b.fields:
                w.array_len(7)
                w.string(s.name)
                w.uint(s.count)
                for stat in _STATS:
                    w.f64(float(getattr(s, stat)))
    else:
        w.uint(2)
        w.array_len(len(reply.values))
        for value in reply.values:
            if value is None:
                w.nil()
            else:
                value.encode(w)


def decode_archive_reply(r: Reader) -> ArchiveReply:
    r.expect_array("archive reply", 2)
    op = r.read_uint()
    if op == 0:
        r.expect_array("page", 2)
        page = Page()
        for _ in range(r.read_array_len()):
            stored = StoredRecord.decode_or_skip(r)
            if isinstance(stored, StoredRecord):
                page.records.append(stored)
            else:
                page.undecodable.append(stored)
        page.next = _read_cursor(r)
        return page
    if op == 1:
        buckets = []
        for _ in range(r.read_array_len()):
            r.expect_array("bucket", 4)
            b = Bucket(r.read_int(), r.read_int(), r.read_uint())
            for _ in range(r.read_array_len()):
                r.expect_array("field statistics", 7)
                name, count = r.read_str(), r.read_uint()
                mn, mx, mean, first, last = (r.read_f64() for _ in range(5))
                b.fields.append(FieldStats(name, count, mn, mx, mean, first, last))
            buckets.append(b)
        return Buckets(buckets)
    if op == 2:
        at = AtValues()
        for _ in range(r.read_array_len()):
            value = None if r.read_nil() else StoredRecord.decode_or_skip(r)
            if isinstance(value, UndecodableRecord):
                at.undecodable.append(value)
                value = None
            at.values.append(value)
        return at
    raise DecodeError(f"invalid archive reply operation {op}")


def archive_reply_to_json(reply: ArchiveReply) -> Dict[str, Any]:
    if isinstance(reply, Page):
        return {
            "op": "page",
            "records": [s.to_json() for s in reply.records],
            "next": _cursor_json(reply.next),
        }
    if isinstance(reply, Buckets):
        return {
            "op": "buckets",
            "buckets": [
                {
                    "start": b.start,
                    "end": b.end,
                    "count": b.count,
                    "fields": [
                        {
                            "name": s.name,
                            "count": s.count,
                            **{k: value_to_json(getattr(s, k)) for k in _STATS},
                        }
                        for s in b.fields
                    ],
                }
                for b in reply.buckets
            ],
        }
    return {"op": "at", "values": [None if v is None else v.to_json() for v in reply.values]}


def archive_reply_from_json(m: Dict[str, Any]) -> ArchiveReply:
    op = m["op"]
    if op == "page":
        records = [StoredRecord.from_json(s) for s in m["records"]]
        return Page(records, _cursor_from_json(m["next"]))
    if op == "buckets":
        buckets = [
            Bucket(
                b["start"],
                b["end"],
                b["count"],
                [
                    FieldStats(
                        s["name"], s["count"], *(float(value_from_json(s[k])) for k in _STATS)
                    )
                    for s in b["fields"]
                ],
            )
            for b in m["buckets"]
        ]
        return Buckets(buckets)
    if op == "at":
        values = [None if v is None else StoredRecord.from_json(v) for v in m["values"]]
        return AtValues(values)
    raise ValueError(f"unknown reply op {op!r}")
