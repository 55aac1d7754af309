"""Log storms: the server's rule for collapsing identical log records (docs/interfaces.md,
"Log storms and source quotas"), applied by :class:`herald.logging.HeraldHandler` before a
record costs network.

Within a window (10 s) the first ``repeats`` (10) identical records pass; the next one
passes marked ``herald.storm = "collapsing"``; later ones are held back and counted. At the
end of each window in which some were held back, the last of them passes as a summary
marked ``repeated`` with its count and first and last times; a window with no more than
``repeats`` ends the storm with a summary marked ``ended`` and the storm's total. What is
identical, and what a record is, the caller says: this module only keeps the counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Generic, Hashable, List, Optional, TypeVar

from .wire.values import Time

STORM_FIELD = "herald.storm"
REPEATED_FIELD = "herald.repeated"
FROM_FIELD = "herald.repeated_from"
TO_FIELD = "herald.repeated_to"
TOTAL_FIELD = "herald.repeated_total"
WINDOW_FIELD = "herald.storm_window_ms"

DEFAULT_WINDOW = 10.0
DEFAULT_REPEATS = 10
# Distinct records followed at once; a new one then takes the place of the oldest seen once
# (a storm's keep theirs), or passes untracked when none is found among the oldest few.
MAX_TRACKED = 16_384
_EVICTION_TRIES = 8

PASS, STARTS, HELD = "pass", "starts", "held"

T = TypeVar("T")


@dataclass
class Summary(Generic[T]):
    """What a window's end says: ``record`` (the last held back, or the storm's first when
    none was) to pass with :func:`summary_fields`."""

    record: T
    repeated: int
    first_ns: int
    last_ns: int
    ended: Optional[int]  # the storm's total, when it ended


@dataclass
class _Entry(Generic[T]):
    window_start: float
    count: int = 1
    storming: bool = False
    held: int = 0
    first_ns: int = 0
    last_ns: int = 0
    total: int = 0
    last: Optional[T] = None


class Collapser(Generic[T]):
    """The collapse state of one stream of records; ``window`` in seconds, ``repeats`` 0
    turns it off. ``now`` is any monotonic clock in seconds."""

    def __init__(self, window: float = DEFAULT_WINDOW, repeats: int = DEFAULT_REPEATS) -> None:
        self.window = float(window)
        self.repeats = int(repeats)
        self.untracked = 0
        self._entries: Dict[Hashable, _Entry[T]] = {}

    @property
    def on(self) -> bool:
        return self.repeats > 0 and self.window > 0

    def offer(self, key: Hashable, now: float, time_ns: int, record: T) -> str:
        """``PASS``, ``STARTS`` (pass it marked with :func:`collapsing_fields`) or ``HELD``."""
        if not self.on:
            return PASS
        entry = self._entries.get(key)
        if entry is None:
            if not self._make_room():
                self.untracked += 1
                return PASS
            self._entries[key] = _Entry(window_start=now, first_ns=time_ns, last_ns=time_ns)
            return PASS
        entry.count += 1
        if not entry.storming and entry.count <= self.repeats:
            return PASS
        if not entry.storming:
            entry.storming = True
            entry.first_ns = entry.last_ns = time_ns
            entry.last = record
            return STARTS
        if entry.held == 0:
            entry.first_ns = time_ns
        entry.held += 1
        entry.total += 1
        entry.last_ns = time_ns
        entry.last = record
        return HELD

    def _make_room(self) -> bool:
        entries = self._entries
        for _ in range(_EVICTION_TRIES):
            if len(entries) < MAX_TRACKED:
                return True
            oldest = next(iter(entries))
            entry = entries.pop(oldest)
            if entry.storming or entry.count > 1:
                entries[oldest] = entry  # a second chance, at the end of the line
        return len(entries) < MAX_TRACKED

    def tick(self, now: float) -> List[Summary[T]]:
        """Ends the windows over at ``now``: the summaries due. While more than half of
        MAX_TRACKED are followed, records seen once in their window are forgotten too."""
        out: List[Summary[T]] = []
        crowded = len(self._entries) > MAX_TRACKED // 2
        for key in list(self._entries):
            entry = self._entries[key]
            if now - entry.window_start < self.window:
                if crowded and not entry.storming and entry.count <= 1:
                    del self._entries[key]
                continue
            calm = entry.count <= self.repeats
            if entry.storming and entry.last is not None and (entry.held > 0 or calm):
                out.append(
                    Summary(
                        entry.last,
                        entry.held,
                        entry.first_ns if entry.held else entry.last_ns,
                        entry.last_ns,
                        entry.total if calm else None,
                    )
                )
            forget = entry.count == 0 or (entry.storming and calm)
            if calm:
                entry.storming, entry.total, entry.last = False, 0, None
            entry.held = entry.count = 0
            entry.window_start = now
            if forget:
                del self._entries[key]
        return out

    def finish(self) -> List[Summary[T]]:
        """Ends every storm now (the stream closes): their last summaries, ``ended``."""
        out = [
            Summary(e.last, e.held, e.first_ns if e.held else e.last_ns, e.last_ns, e.total)
            for e in self._entries.values()
            if e.storming and e.last is not None
        ]
        self._entries.clear()
        return out


def collapsing_fields(window: float) -> Dict[str, Any]:
    return {STORM_FIELD: "collapsing", WINDOW_FIELD: int(window * 1000)}


def summary_fields(summary: Summary[Any]) -> Dict[str, Any]:
    fields: Dict[str, Any] = {
        STORM_FIELD: "ended" if summary.ended is not None else "repeated",
        REPEATED_FIELD: summary.repeated,
        FROM_FIELD: Time(summary.first_ns),
        TO_FIELD: Time(summary.last_ns),
    }
    if summary.ended is not None:
        fields[TOTAL_FIELD] = summary.ended
    return fields
