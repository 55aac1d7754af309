"""Records: maps with small integer keys, written canonically (docs/protocol.md, Records)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Dict, List, Optional, Union

from .msgpack_codec import (
    HAVE_PACKER,
    I64_MAX,
    I64_MIN,
    U64_MAX,
    DecodeError,
    Reader,
    Writer,
    thread_packer,
)
from .origin import Origin
from .priority import Priority
from .values import (
    Fields,
    NotPlain,
    decode_fields,
    encode_fields,
    fields_from_json,
    fields_to_json,
    plain_fields,
)

MAX_SUBJECT_BYTES = 1024
_CHECKED_SUBJECTS_MAX = 4096


class Kind(IntEnum):
    LOG = 0
    MESSAGE = 1
    INFO = 2

    @property
    def wire_name(self) -> str:
        return self.name.lower()


def check_subject(subject: str) -> None:
    """Raises ValueError unless ``subject`` is a valid subject (or ``reply_to``)."""
    if not subject:
        raise ValueError("subject is empty")
    size = len(subject.encode("utf-8"))
    if size > MAX_SUBJECT_BYTES:
        raise ValueError(f"subject of {size} bytes is longer than 1024")
    for c in subject:
        if c in "*?" or unicodedata.category(c) == "Cc":
            raise ValueError(
                f"subject {subject!r} contains {c!r} "
                "(subjects may not hold wildcards or control characters)"
            )


# Subjects that passed check_subject: a program publishes on few subjects, over and over.
_checked_subjects: set[str] = set()


def _check_subject_cached(subject: Any) -> None:
    if type(subject) is not str:
        raise NotPlain
    if subject in _checked_subjects:
        return
    check_subject(subject)
    if len(_checked_subjects) >= _CHECKED_SUBJECTS_MAX:
        _checked_subjects.clear()
    _checked_subjects.add(subject)


_RECORD_NAMES = (
    "kind",
    "subject",
    "type",
    "time",
    "priority",
    "audience",
    "origin",
    "text",
    "fields",
    "reply_to",
    "id",
)


@dataclass
class Record:
    """One published record. ``time`` is integer nanoseconds since the Unix epoch."""

    kind: Kind
    subject: str
    time: int
    type: str = ""
    priority: Priority = Priority.INFO
    audience: List[str] = field(default_factory=list)
    origin: Origin = field(default_factory=Origin)
    text: str = ""
    fields: Fields = field(default_factory=dict)
    reply_to: Optional[str] = None
    id: Optional[int] = None

    def encode(self, w: Writer) -> None:
        """Writes the record canonically (as :meth:`to_bytes`)."""
        w.raw(self.to_bytes())

    def to_bytes(self) -> bytes:
        """The record's canonical bytes: msgpack's packer on :meth:`plain` when the record
        holds only plain values, else :meth:`encode_reference`; both write the same bytes."""
        if HAVE_PACKER:
            try:
                return thread_packer()(self.plain())
            except NotPlain:
                pass
        return self.to_bytes_reference()

    def plain(self) -> Dict[int, Any]:
        """The record as a map of plain values for :func:`pack`, checked as
        :meth:`encode_reference` checks it; raises NotPlain for a part of another type."""
        subject, time, reply_to = self.subject, self.time, self.reply_to
        if type(subject) is not str or subject not in _checked_subjects:
            _check_subject_cached(subject)
        if reply_to is not None:
            _check_subject_cached(reply_to)
        if type(time) is not int or not I64_MIN <= time <= I64_MAX or type(self.kind) is not Kind:
            raise NotPlain
        parts: Dict[int, Any] = {0: self.kind, 1: subject}
        if self.type:
            parts[2] = _plain_str(self.type)
        parts[3] = time
        priority = self.priority
        parts[4] = priority if type(priority) is Priority else Priority(priority)
        if self.audience:
            parts[5] = [_plain_str(name) for name in self.audience]
        origin = self.origin.plain()
        if origin:
            parts[6] = origin
        text = self.text
        if text:
            if type(text) is not str:
                raise NotPlain
            parts[7] = text
        if self.fields:
            parts[8] = plain_fields(self.fields, 1)
        if reply_to is not None:
            parts[9] = reply_to
        if self.id is not None:
            if type(self.id) is not int or not 0 <= self.id <= U64_MAX:
                raise NotPlain
            parts[10] = self.id
        return parts

    def encode_reference(self, w: Writer) -> None:
        """Writes the record canonically: ascending keys, empty parts left out. The reference
        for :meth:`plain`, and the encoding of records that it does not take."""
        check_subject(self.subject)
        if self.reply_to is not None:
            check_subject(self.reply_to)
        keys = [0, 1]
        if self.type:
            keys.append(2)
        keys += [3, 4]
        if self.audience:
            keys.append(5)
        if not self.origin.is_empty():
            keys.append(6)
        if self.text:
            keys.append(7)
        if self.fields:
            keys.append(8)
        if self.reply_to is not None:
            keys.append(9)
        if self.id is not None:
            keys.append(10)
        w.map_len(len(keys))
        for key in keys:
            w.uint(key)
            if key == 0:
                w.uint(int(self.kind))
            elif key == 1:
                w.string(self.subject)
            elif key == 2:
                w.string(self.type)
            elif key == 3:
                w.sint(self.time)
            elif key == 4:
                w.uint(int(Priority(self.priority)))
            elif key == 5:
                w.array_len(len(self.audience))
                for name in self.audience:
                    w.string(name)
            elif key == 6:
                self.origin.encode(w)
            elif key == 7:
                w.string(self.text)
            elif key == 8:
                encode_fields(w, self.fields, 1)
            elif key == 9:
                w.string(self.reply_to or "")
            else:
                w.uint(self.id or 0)

    def to_bytes_reference(self) -> bytes:
        w = Writer()
        self.encode_reference(w)
        return w.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> Record:
        r = Reader(data)
        record = cls.decode(r)
        if not r.is_empty():
            raise DecodeError(f"{r.remaining()} trailing bytes after the record")
        return record

    @classmethod
    def decode(cls, r: Reader) -> Record:
        values: Dict[str, Any] = {}
        for _ in range(r.read_map_len()):
            key = r.read_uint()
            if key >= len(_RECORD_NAMES):
                raise DecodeError(f"unknown field {key} in record")
            name = _RECORD_NAMES[key]
            if name in values:
                raise DecodeError(f"field `{name}` appears twice in record")
            values[name] = _decode_part(r, key)
        for required in ("kind", "subject", "time"):
            if required not in values:
                raise DecodeError(f"record is missing required field `{required}`")
        return cls(**values)

    def to_json(self) -> Dict[str, Any]:
        """The record's meaning, every field present (as meaning.rs ``record_json``)."""
        return {
            "kind": Kind(self.kind).wire_name,
            "subject": self.subject,
            "type": self.type,
            "time": self.time,
            "priority": int(self.priority),
            "priority_name": Priority(self.priority).name,
            "audience": list(self.audience),
            "origin": self.origin.to_json(),
            "text": self.text,
            "fields": fields_to_json(self.fields),
            "reply_to": self.reply_to,
            "id": self.id,
        }

    @classmethod
    def from_json(cls, meaning: Dict[str, Any]) -> Record:
        return cls(
            kind=Kind[meaning["kind"].upper()],
            subject=meaning["subject"],
            time=meaning["time"],
            type=meaning.get("type", ""),
            priority=Priority(meaning.get("priority", 4)),
            audience=list(meaning.get("audience", [])),
            origin=Origin.from_json(meaning.get("origin", {})),
            text=meaning.get("text", ""),
            fields=fields_from_json(meaning.get("fields", {})),
            reply_to=meaning.get("reply_to"),
            id=meaning.get("id"),
        )


@dataclass
class UndecodableRecord:
    """Bytes in the place of a record that this client cannot decode (a newer server's
    field, an int outside i64 from an old archive, …) but that are whole MessagePack, so a
    reader steps over them and reads on. ``reason`` says what did not decode."""

    data: bytes
    reason: str


def decode_record_or_skip(r: Reader) -> Union[Record, UndecodableRecord]:
    """The next record, or an :class:`UndecodableRecord` with the reader past its bytes.
    Raises DecodeError only when the bytes are not even one MessagePack value."""
    start = r.pos
    try:
        return Record.decode(r)
    except DecodeError as err:
        r.pos = start
        r.skip_value()
        return UndecodableRecord(bytes(r.data[start : r.pos]), str(err))


def _plain_str(value: Any) -> str:
    if type(value) is not str:
        raise NotPlain
    return value


def _decode_part(r: Reader, key: int) -> Any:
    try:
        if key == 0:
            return Kind(r.read_uint())
        if key in (1, 9):
            subject = r.read_str()
            check_subject(subject)
            return subject
        if key in (2, 7):
            return r.read_str()
        if key == 3:
            return r.read_int()
        if key == 4:
            return Priority.from_number(r.read_uint())
        if key == 5:
            return [r.read_str() for _ in range(r.read_array_len())]
        if key == 6:
            return Origin.decode(r)
        if key == 8:
            return decode_fields(r, 1)
        return r.read_uint()
    except DecodeError:
        raise
    except ValueError as err:
        raise DecodeError(f"invalid {_RECORD_NAMES[key]}: {err}") from err


__all__ = [
    "Kind",
    "Origin",
    "Record",
    "UndecodableRecord",
    "check_subject",
    "decode_record_or_skip",
]
