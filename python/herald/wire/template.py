"""Record templates: what repeats from one record to the next, written once (the logging
handler packs the records of one call site with one)."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from .msgpack_codec import HAVE_PACKER, I64_MAX, I64_MIN, Writer, thread_packer
from .priority import Priority
from .record import Kind, Origin, Record, check_subject
from .values import Fields, NotPlain, plain_fields

_FIXMAP = [bytes([0x80 | size]) for size in range(16)]


class RecordTemplate:
    """What repeats from one record to the next — kind, subject, priority and origin —
    written once; :meth:`pack` adds a time, a text and fields. It gives the bytes of the
    :class:`Record` with those parts, for a fraction of the cost: how the logging handler
    packs the records of one call site."""

    def __init__(self, kind: Kind, subject: str, priority: Priority, origin: Origin) -> None:
        check_subject(subject)
        self._kind, self._subject = Kind(kind), subject
        self._priority, self._origin = Priority(priority), replace(origin)
        w = Writer()
        w.uint(0)
        w.uint(int(self._kind))
        w.uint(1)
        w.string(subject)
        self._head = w.getvalue()
        w = Writer()
        w.uint(4)
        w.uint(int(self._priority))
        self._size = 4
        if not origin.is_empty():
            w.uint(6)
            origin.encode(w)
            self._size = 5
        self._middle = w.getvalue()

    def pack(self, time: int, text: str = "", fields: Optional[Fields] = None) -> bytes:
        """The record's bytes: msgpack's packer on the parts when they are plain, else
        :meth:`Record.encode_reference` (which also refuses what is wrong)."""
        if HAVE_PACKER and type(time) is int and I64_MIN <= time <= I64_MAX:
            packer = thread_packer()
            size = self._size
            pieces = [b"", self._head, b"\x03", packer(time), self._middle]
            if text:
                if type(text) is not str:
                    return self.record(time, text, fields).to_bytes_reference()
                pieces += (b"\x07", packer(text))
                size += 1
            try:
                if fields:
                    pieces += (b"\x08", packer(plain_fields(fields, 1)))
                    size += 1
            except NotPlain:
                return self.record(time, text, fields).to_bytes_reference()
            pieces[0] = _FIXMAP[size]
            return b"".join(pieces)
        return self.record(time, text, fields).to_bytes_reference()

    def record(self, time: int, text: str = "", fields: Optional[Fields] = None) -> Record:
        """The :class:`Record` that :meth:`pack` packs."""
        return Record(
            kind=self._kind,
            subject=self._subject,
            time=time,
            priority=self._priority,
            origin=replace(self._origin),
            text=text,
            fields=fields or {},
        )


__all__ = ["RecordTemplate"]
