"""The disk buffer: where a producer keeps its records while no server answers, within a
quota, across its own restarts (docs: python/README.md, Disk buffer).

Directory layout::

    lock                 held with flock while open (``spool_lock.py``)
    state                producer id, numbering limit, how far the server acknowledged
    <ident:020d>.seg     segments, oldest (lowest ident) first (``segment.py``)

``state`` is 36 bytes, big-endian: ``b"HRLDST01"``, ``producer`` u64, ``limit`` u64 (no
record has a number at or above it), ``acked`` u64 (every record in the buffer numbered at or
below it has been acknowledged by a server), CRC-32 of the 32 bytes before it (u32). It is
written to ``state.tmp``, synced and renamed over ``state``.

Records are numbered when they enter the buffer, from the producer's :class:`Numbering`, which
the client sending them shares; the segments hold them in the order of their numbers, oldest
first. :meth:`Spool.read` gives them back in that order; :meth:`Spool.acknowledge` records how
far the server has acknowledged them and deletes the segments that hold no record after it.

Quota: ``quota`` bytes of segments at most. When a batch does not fit, the lowest priority
goes first: if the lowest priority on disk is at most the lowest in the batch, the oldest
segments holding that priority are rewritten without its oldest records (at least 1/64 of the
quota freed at once, so that appends do not rewrite at every batch); otherwise the batch's
records of its lowest priority are dropped, oldest first, as many as needed. Every record lost
so is counted by priority in :attr:`losses` (reason ``disk_quota``), as are the records of a
torn tail cut at opening (``disk_torn``) and records a failing disk would not take
(``disk_error``).

Not thread-safe: the background thread that sends does all of it."""

from __future__ import annotations

import os
import struct
import zlib
from typing import List, Optional, Tuple

from .dialer import new_producer_id
from .drops import DISK_ERROR, DISK_QUOTA, DISK_TORN, DROP_REPORT_TYPE, DropCounts
from .numbering import Numbering
from .segment import HEADER_BYTES, MAGIC, PRIORITY_SLOTS, REPORT_RANK, Entry, Segment
from .spool_lock import SpoolLock
from .wire.priority import Priority
from .wire.record import Record

DEFAULT_BUFFER_QUOTA = 256 * 1024 * 1024
MIN_SEGMENT_BYTES = 64 * 1024
MAX_SEGMENT_BYTES = 8 * 1024 * 1024
STATE_MAGIC = b"HRLDST01"
_STATE = struct.Struct(">8sQQQ")
_FIRST_IDENT = 1 << 40
# Shedding frees at least quota / SHED_FRACTION bytes at once, so that a full buffer is not
# rewritten at every batch.
SHED_FRACTION = 64

# (priority, encoded record): what a producer hands the buffer.
Incoming = Tuple[int, bytes]


def segment_bytes_for(quota: int) -> int:
    """The size at which a segment is closed and the next begun: a sixteenth of the quota,
    within 64 KiB..8 MiB (shedding frees a segment's worth at least)."""
    return min(MAX_SEGMENT_BYTES, max(MIN_SEGMENT_BYTES, quota // 16))


class Spool:
    """An open disk buffer directory. Raises SpoolLockedError when another process has it,
    OSError when it cannot be made or read. With ``load`` False only the lock and the state
    are taken: :meth:`load` reads the segments later (on the thread that will use them;
    reading 300,000 records takes most of a second)."""

    def __init__(
        self, directory: str, quota: int = DEFAULT_BUFFER_QUOTA, load: bool = True
    ) -> None:
        if quota < MIN_SEGMENT_BYTES:
            raise ValueError(f"buffer quota {quota} bytes (expected {MIN_SEGMENT_BYTES} or more)")
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.quota = quota
        self.segment_bytes = segment_bytes_for(quota)
        self._lock = SpoolLock(directory)
        # Losses not yet reported to a server; and all of them since opening.
        self.losses = DropCounts()
        self.lost = 0
        self._segments: List[Segment] = []
        # Where read() goes on: (segment ident, offset); None = from the first segment.
        self._cursor: Optional[Tuple[int, int]] = None
        try:
            producer, self._limit, self._acked = self._read_state()
            self.numbering = Numbering(producer, self._limit, self._reserve, self._limit)
            self._write_state()
            if load:
                self.load()
        except BaseException:
            self._lock.release()
            raise

    def load(self) -> None:
        """Reads the segments: cuts torn tails (counting what they held), forgets what was
        acknowledged, and numbers on after the highest number found (in case the state
        file was lost: new numbers must not repeat the ones on disk). Call it once, before
        numbering anything."""
        self._segments = self._open_segments()
        last = self.last_seq
        if last >= self._limit:
            self._limit = last + 1
            self.numbering.advance(self._limit)
        self._forget_acknowledged()
        self._write_state()

    # ---- state -------------------------------------------------------------------------

    def _state_path(self) -> str:
        return os.path.join(self.directory, "state")

    def _read_state(self) -> Tuple[int, int, int]:
        """(producer, limit, acked) from the state file; a new producer if there is none (or
        it does not check out: its numbers are then unknown, and a new id cannot clash)."""
        try:
            with open(self._state_path(), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        if len(data) == _STATE.size + 4 and zlib.crc32(data[:-4]) == int.from_bytes(
            data[-4:], "big"
        ):
            magic, producer, limit, acked = _STATE.unpack_from(data)
            if magic == STATE_MAGIC and producer:
                return producer, limit, acked
        return new_producer_id(), 1, 0

    def _write_state(self) -> None:
        body = _STATE.pack(STATE_MAGIC, self.numbering.producer, self._limit, self._acked)
        tmp = self._state_path() + ".tmp"
        with open(tmp, "wb") as out:
            out.write(body + zlib.crc32(body).to_bytes(4, "big"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self._state_path())

    def _reserve(self, limit: int) -> None:
        """Numbering's hook: writes the new limit down before numbers below it are used."""
        self._limit = limit
        self._write_state()

    def _open_segments(self) -> List[Segment]:
        segments = []
        for name in sorted(os.listdir(self.directory)):
            path = os.path.join(self.directory, name)
            if name.endswith(".tmp"):
                os.remove(path)  # a rewrite or state write cut short: the old file stands
                continue
            if not name.endswith(".seg") or not name[:-4].isdigit():
                continue
            segment, torn = Segment.open(path, int(name[:-4]))
            for priority in range(PRIORITY_SLOTS):
                self._lose(priority, DISK_TORN, torn[priority])
            if segment.size:
                segments.append(segment)
        return segments

    def _lose(self, priority: int, reason: str, n: int = 1) -> None:
        # A drop report lost is counted as the WARNING record it is.
        priority = int(Priority.WARNING) if priority == REPORT_RANK else priority
        self.losses.count(priority, reason, n)
        self.lost += max(n, 0)

    # ---- what is in it -----------------------------------------------------------------

    @property
    def used_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    @property
    def pending(self) -> bool:
        """True while the buffer holds records no server has acknowledged."""
        return any(segment.last_seq > self._acked for segment in self._segments)

    @property
    def last_seq(self) -> int:
        """The highest number in the buffer (0 if empty)."""
        return max((segment.last_seq for segment in self._segments), default=0)

    def records(self) -> int:
        """Records in the segments (acknowledged ones in a segment not yet deleted too)."""
        return sum(segment.records for segment in self._segments)

    # ---- writing -----------------------------------------------------------------------

    def append(self, incoming: List[Incoming]) -> None:
        """Numbers ``incoming`` and writes it after everything in the buffer, shedding by
        priority when the quota is full (see the module's notes)."""
        kept = self._make_room(incoming)
        if not kept:
            return
        try:
            first = self.numbering.take(len(kept))
        except OSError:  # the state file could not be written: no numbers to give
            for priority, _ in kept:
                self._lose(priority, DISK_ERROR)
            return
        entries = [(first + i, priority, record) for i, (priority, record) in enumerate(kept)]
        self._write(entries)

    def _write(self, entries: List[Entry]) -> None:
        try:
            start = 0
            while start < len(entries):
                segment = self._active()
                room, end = self.segment_bytes - segment.size, start
                while end < len(entries) and (end == start or room > 0):
                    room -= HEADER_BYTES + len(entries[end][2])
                    end += 1
                if room < 0 and end - start > 1:
                    end -= 1  # the last one goes in the next segment
                segment.append(entries[start:end])
                start = end
        except OSError:
            for _, priority, _ in entries[start:]:
                self._lose(priority, DISK_ERROR)

    def _active(self) -> Segment:
        """The segment appends go to: the last one, or a new one when it is full."""
        if self._segments and self._segments[-1].size < self.segment_bytes:
            return self._segments[-1]
        if self._segments:
            self._segments[-1].seal()
        ident = self._segments[-1].ident + 1 if self._segments else _FIRST_IDENT
        segment = Segment.create(self.directory, ident)
        self._segments.append(segment)
        return segment

    def make_room(self, priority: int, nbytes: int) -> None:
        """Sheds records of ``priority`` or lower, the lowest first, until a record of
        ``nbytes`` fits (for a drop report, made before its counts are taken so that it
        counts what this sheds); counts what it sheds. As the Rust logger's ``make_room``."""
        need = HEADER_BYTES + nbytes
        while self.used_bytes + need > self.quota:
            lowest = self._lowest_on_disk()
            if lowest is None or lowest > priority:
                return
            over = self.used_bytes + need - self.quota
            if not self._shed(lowest, max(over, self.quota // SHED_FRACTION)):
                return

    def _make_room(self, incoming: List[Incoming]) -> List[Incoming]:
        """``incoming`` less what the quota sheds of it, after shedding from the disk."""
        keep = self._room_for([(priority, len(record)) for priority, record in incoming])
        return [entry for entry, kept in zip(incoming, keep) if kept]

    def _room_for(self, sizes: List[Tuple[int, int]]) -> List[bool]:
        """Makes room for records of (priority, bytes): which of them may be written."""
        keep = [True] * len(sizes)
        need = sum(HEADER_BYTES + size for _, size in sizes)
        while need and self.used_bytes + need > self.quota:
            lowest_new = min(priority for (priority, _), kept in zip(sizes, keep) if kept)
            lowest_disk = self._lowest_on_disk()
            if lowest_disk is not None and lowest_disk <= lowest_new:
                over = self.used_bytes + need - self.quota
                if self._shed(lowest_disk, max(over, self.quota // SHED_FRACTION)):
                    continue
            # Nothing on disk ranks below the newcomers' lowest: those go, oldest first,
            # as many as it takes.
            for i, (priority, size) in enumerate(sizes):
                if self.used_bytes + need <= self.quota:
                    break
                if keep[i] and priority == lowest_new:
                    keep[i] = False
                    self._lose(priority, DISK_QUOTA)
                    need -= HEADER_BYTES + size
        return keep

    def _lowest_on_disk(self) -> Optional[int]:
        for priority in range(PRIORITY_SLOTS):
            if any(segment.counts[priority] for segment in self._segments):
                return priority
        return None

    def _shed(self, priority: int, at_least: int) -> int:
        """Rewrites the oldest segments holding ``priority`` without its oldest records
        (and without what was acknowledged) until ``at_least`` bytes are freed; counts what
        was lost; returns the bytes freed (0 when the disk would not let it)."""
        acked = self._acked
        before = self.used_bytes
        budget = [at_least]  # bytes of ``priority`` still to drop, oldest first

        def keep(entry: Entry) -> bool:
            seq, entry_priority, record = entry
            if seq <= acked:
                return False  # acknowledged: no loss, and room
            if entry_priority != priority or budget[0] <= 0:
                return True
            budget[0] -= HEADER_BYTES + len(record)
            return False

        for segment in list(self._segments):
            if budget[0] <= 0:
                break
            if not segment.counts[priority]:
                continue
            try:
                dropped = segment.rewrite(keep)
            except OSError:
                break  # the segment stands as it was
            for seq, lost_priority, _ in dropped:
                if seq > acked:
                    self._lose(lost_priority, DISK_QUOTA)
            if not segment.records and segment is not self._segments[-1]:
                segment.remove()
                self._segments.remove(segment)
        self._cursor = None  # offsets moved: read again from the start (acked ones skipped)
        return before - self.used_bytes

    def keep_unacknowledged(self, sent: List[Tuple[int, bytes]]) -> None:
        """Keeps records a client sent and no server acknowledged (numbered, oldest first)
        when the program ends while no server answers. They are older than anything the
        buffer holds that has not been acknowledged (records from the buffer only go out
        once it has nothing older), so they go in a segment before the others; the ones the
        buffer holds already are left out."""
        oldest = self._oldest_unacknowledged()
        entries: List[Entry] = []
        for seq, record in sent:
            if seq <= self._acked or (oldest is not None and seq >= oldest):
                continue
            try:
                decoded = Record.from_bytes(record)
                priority = int(decoded.priority)
                if decoded.type == DROP_REPORT_TYPE:
                    priority = REPORT_RANK  # shed last, as when it was first put on disk
            except ValueError:
                priority = 0
            entries.append((seq, priority, record))
        if not entries:
            return
        keep = self._room_for([(priority, len(record)) for _, priority, record in entries])
        entries = [entry for entry, kept in zip(entries, keep) if kept]
        if not entries:
            return
        ident = self._segments[0].ident - 1 if self._segments else _FIRST_IDENT
        try:
            segment = Segment.create(self.directory, ident)
            segment.append(entries)
            segment.seal()
        except OSError:
            for _, priority, _ in entries:
                self._lose(priority, DISK_ERROR)
            return
        self._segments.insert(0, segment)
        self._cursor = None

    def _oldest_unacknowledged(self) -> Optional[int]:
        saved = self._cursor
        self._cursor = None
        found = self.read(1)
        self._cursor = saved
        return found[0][0] if found else None

    # ---- reading back ------------------------------------------------------------------

    def read(self, max_bytes: int) -> List[Tuple[int, bytes]]:
        """The next records not acknowledged, in order, about ``max_bytes`` of them, as
        (number, encoded record); [] at the end of the buffer."""
        found: List[Tuple[int, bytes]] = []
        budget = max_bytes
        while budget > 0:
            located = self._locate()
            if located is None:
                break
            index, offset = located
            segment = self._segments[index]
            entries, end = segment.read(offset, budget)
            if not entries:
                if index + 1 >= len(self._segments):
                    break
                self._cursor = (self._segments[index + 1].ident, len(MAGIC))
                continue
            self._cursor = (segment.ident, end)
            for seq, _, record in entries:
                if seq > self._acked:
                    found.append((seq, record))
                    budget -= HEADER_BYTES + len(record)
        return found

    def _locate(self) -> Optional[Tuple[int, int]]:
        if not self._segments:
            return None
        if self._cursor is None:
            return 0, len(MAGIC)
        ident, offset = self._cursor
        for index, segment in enumerate(self._segments):
            if segment.ident == ident:
                return index, offset
            if segment.ident > ident:
                return index, len(MAGIC)
        return None

    def rewind(self) -> None:
        """Reads again from the oldest record not acknowledged (after a failed send)."""
        self._cursor = None

    def acknowledge(self, through: int) -> None:
        """Notes that every record numbered up to ``through`` has been acknowledged: deletes
        the segments holding nothing after it and writes the state down."""
        if through <= self._acked:
            return
        self._acked = through
        try:
            self._forget_acknowledged()
            self._write_state()
        except OSError:
            pass  # not written down: those records may be sent again after a restart

    def _forget_acknowledged(self) -> None:
        while self._segments and self._segments[0].last_seq <= self._acked:
            self._segments.pop(0).remove()

    def close(self) -> None:
        """Syncs the segment being written and the state, and lets go of the directory."""
        try:
            if self._segments:
                self._segments[-1].seal()
            self._write_state()
        finally:
            self._lock.release()
