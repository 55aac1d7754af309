"""One segment file of the disk buffer (``spool.py``): records already encoded (the bytes a
PUBLISH frame carries), appended one after another, each with a header that lets a reader
find a torn tail after a crash.

File layout (all integers big-endian, as on the wire)::

    magic   8 bytes   b"HRLDSPL1"
    then entries, one after another:
      length    u32   bytes of the record (after priority)
      crc       u32   CRC-32 (zlib) of the bytes that follow it: seq, priority, record
      seq       u64   the record's number under the producer (docs/protocol.md, Numbered records)
      priority  u8    the rank the quota sheds by: the record's priority (1..11; 0 unknown),
                      or 12 for a drop report (a WARNING record), above them all: shed last
      record    length bytes: the encoded record map, as a PUBLISH frame carries it

A segment only grows at its end, by one ``write`` per batch; it changes otherwise only when
the quota sheds records from it, by writing the records kept to ``<name>.tmp`` and renaming it
over the segment (atomic: a crash leaves the old or the new file, and a ``.tmp`` that opening
the buffer removes). Opening a segment reads every entry and cuts the file back to the last
whole entry whose CRC matches: what is cut is a torn tail, counted as lost."""

from __future__ import annotations

import io
import os
import struct
import zlib
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Tuple

MAGIC = b"HRLDSPL1"
ENTRY_HEADER = struct.Struct(">IIQB")  # length, crc, seq, priority
HEADER_BYTES = ENTRY_HEADER.size  # 17
_CHECKED_FROM = 8  # the CRC covers an entry from its seq to its end
_SEQ_PRIORITY = struct.Struct(">QB")
# Priority wire values run 1..11; slot 0 counts records whose priority is unknown, slot 12 the
# drop reports (REPORT_RANK).
PRIORITY_SLOTS = 13
# The rank of a drop report on disk: above every priority, so that the quota sheds it last
# (shed, it would lose the counts it carries). The record itself is a WARNING.
REPORT_RANK = 12
# A length above this is no length a writer wrote (a frame holds at most 64 MiB).
MAX_ENTRY_BYTES = 1 << 26

# (number, priority, encoded record)
Entry = Tuple[int, int, bytes]


def encode_entry(seq: int, priority: int, record: bytes) -> bytes:
    """An entry's bytes: its header, then the record."""
    checked = _SEQ_PRIORITY.pack(seq, priority)
    crc = zlib.crc32(record, zlib.crc32(checked))
    return struct.pack(">II", len(record), crc) + checked + record


def decode_entries(data: bytes, offset: int) -> Iterator[Tuple[int, Entry]]:
    """The whole, intact entries of ``data`` from ``offset`` on, each with the offset after
    it; stops at the first one cut short or whose CRC does not match."""
    end = len(data)
    view = memoryview(data)
    unpack = ENTRY_HEADER.unpack_from
    crc32 = zlib.crc32
    while offset + HEADER_BYTES <= end:
        length, crc, seq, priority = unpack(data, offset)
        start = offset + HEADER_BYTES
        after = start + length
        if length > MAX_ENTRY_BYTES or after > end:
            return
        if crc32(view[offset + _CHECKED_FROM : after]) != crc:
            return
        offset = after
        yield offset, (seq, priority, data[start:after])


def count_torn(data: bytes, offset: int) -> List[int]:
    """Lost records in a torn tail from ``offset``, by priority slot: entries are walked by
    their length fields for as long as those look whole; at least one record is counted
    (slot 0, priority unknown, when even its header is cut)."""
    lost = [0] * PRIORITY_SLOTS
    end = len(data)
    while offset < end:
        if offset + HEADER_BYTES > end:
            lost[0] += 1
            break
        length, _, _, priority = ENTRY_HEADER.unpack_from(data, offset)
        lost[priority if 1 <= priority < PRIORITY_SLOTS else 0] += 1
        if length > MAX_ENTRY_BYTES:
            break
        offset += HEADER_BYTES + length
    return lost


@dataclass
class Segment:
    """A segment file and what it holds: record counts and bytes by priority, the highest
    number in it, its size. ``ident`` orders the segments: lower is older."""

    path: str
    ident: int
    size: int = len(MAGIC)
    counts: List[int] = field(default_factory=lambda: [0] * PRIORITY_SLOTS)
    sizes: List[int] = field(default_factory=lambda: [0] * PRIORITY_SLOTS)
    last_seq: int = 0
    _file: Optional[io.FileIO] = field(default=None, repr=False)

    @classmethod
    def create(cls, directory: str, ident: int) -> Segment:
        path = os.path.join(directory, f"{ident:020d}.seg")
        with open(path, "wb") as out:
            out.write(MAGIC)
        return cls(path, ident)

    @classmethod
    def open(cls, path: str, ident: int) -> Tuple[Segment, List[int]]:
        """Reads a segment, cutting a torn tail off the file; returns it and the records the
        tail held, by priority slot."""
        with open(path, "rb") as f:
            data = f.read()
        segment = cls(path, ident)
        if data[: len(MAGIC)] != MAGIC:
            # Torn before its header was whole (or not ours): nothing in it can be read.
            lost = count_torn(data, len(MAGIC)) if len(data) > len(MAGIC) else [0] * PRIORITY_SLOTS
            os.remove(path)
            segment.size = 0
            return segment, lost
        good = len(MAGIC)
        for after, (seq, priority, record) in decode_entries(data, len(MAGIC)):
            segment.note(seq, priority, HEADER_BYTES + len(record))
            good = after
        lost = [0] * PRIORITY_SLOTS
        if good < len(data):
            lost = count_torn(data, good)
            with open(path, "r+b") as f:
                f.truncate(good)
                os.fsync(f.fileno())
        segment.size = good
        return segment, lost

    def note(self, seq: int, priority: int, size: int) -> None:
        """Counts an entry of ``size`` bytes in the segment."""
        slot = priority if 0 < priority < PRIORITY_SLOTS else 0
        self.counts[slot] += 1
        self.sizes[slot] += size
        self.last_seq = max(self.last_seq, seq)

    @property
    def records(self) -> int:
        return sum(self.counts)

    def append(self, entries: List[Entry]) -> None:
        """Appends ``entries`` in one write."""
        data = b"".join(encode_entry(seq, priority, record) for seq, priority, record in entries)
        if self._file is None:
            self._file = io.FileIO(self.path, "ab")
        self._file.write(data)
        self.size += len(data)
        for seq, priority, record in entries:
            self.note(seq, priority, HEADER_BYTES + len(record))

    def seal(self, sync: bool = True) -> None:
        """Closes the file for appending (after an fsync when ``sync``)."""
        if self._file is None:
            return
        if sync:
            os.fsync(self._file.fileno())
        self._file.close()
        self._file = None

    def read(self, offset: int, max_bytes: int) -> Tuple[List[Entry], int]:
        """The entries from ``offset`` on, about ``max_bytes`` of them (at least one if there
        is one: [] means the end of the segment), and the offset after the last."""
        with open(self.path, "rb") as f:
            f.seek(offset)
            data = f.read(max(max_bytes, HEADER_BYTES))
            if len(data) >= HEADER_BYTES:
                length = ENTRY_HEADER.unpack_from(data, 0)[0]
                if HEADER_BYTES + length > len(data):  # one entry larger than max_bytes
                    data += f.read(HEADER_BYTES + length - len(data))
        entries: List[Entry] = []
        end = 0
        for after, entry in decode_entries(data, 0):
            entries.append(entry)
            end = after
        return entries, offset + end

    def rewrite(self, keep: Callable[[Entry], bool]) -> List[Entry]:
        """Rewrites the segment with the entries ``keep`` accepts (atomically, by rename);
        returns the entries left out."""
        self.seal(sync=False)
        with open(self.path, "rb") as f:
            data = f.read()
        kept: List[bytes] = [MAGIC]
        dropped: List[Entry] = []
        fresh = Segment(self.path, self.ident)
        start = len(MAGIC)
        for end, entry in decode_entries(data, start):
            if keep(entry):
                kept.append(data[start:end])
                fresh.note(entry[0], entry[1], end - start)
            else:
                dropped.append(entry)
            start = end
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as out:
            out.write(b"".join(kept))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)
        self.size = sum(len(part) for part in kept)
        self.counts, self.sizes, self.last_seq = fresh.counts, fresh.sizes, fresh.last_seq
        return dropped

    def remove(self) -> None:
        self.seal(sync=False)
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass
