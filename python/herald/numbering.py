"""How a producer numbers its records: its id and the number the next record gets
(docs/protocol.md, Numbered records). One :class:`Numbering` serves every connection of a
client, so a failover does not start again at 1; the disk buffer (``spool.py``) gives the
client one that it keeps on disk, so that the producer keeps its id and goes on numbering
after a restart.

Numbers are taken in blocks from ``reserve``: before the first number of a new block is
handed out, ``reserve(limit)`` is called with the first number not yet allowed, and the disk
buffer writes that limit down. After a restart numbering goes on from the limit written, so a
number is never handed out twice, even if the process died without saying how far it got
(the numbers between the last one used and the limit are skipped: a server sees a gap in the
numbers, which is no loss)."""

from __future__ import annotations

import threading
from typing import Callable, Optional

# Numbers reserved at once by a Numbering that keeps its limit on disk: one write of the
# disk buffer's state file per this many records.
RESERVE_BLOCK = 1 << 16


class Numbering:
    """A producer id and the next number. Safe to share between threads."""

    def __init__(
        self,
        producer: int,
        next_seq: int = 1,
        reserve: Optional[Callable[[int], None]] = None,
        limit: int = 0,
    ) -> None:
        if next_seq < 1:
            raise ValueError(f"first record number {next_seq} (expected 1 or more)")
        self.producer = producer
        self._next = next_seq
        self._reserve = reserve
        # Numbers below this may be handed out without calling ``reserve`` first.
        self._limit = limit if reserve is not None else 0
        self._lock = threading.Lock()

    @property
    def next_seq(self) -> int:
        """The number the next record gets."""
        return self._next

    def advance(self, next_seq: int) -> None:
        """Goes on numbering from ``next_seq`` at least."""
        with self._lock:
            self._next = max(self._next, next_seq)

    def take(self, count: int) -> int:
        """Numbers the next ``count`` records: returns the number of the first, or 0 (not
        numbered) when ``count`` is 0. Calls ``reserve`` first when the numbers cross the
        reserved limit; if it raises, no number is taken."""
        if count == 0:
            return 0
        with self._lock:
            first = self._next
            end = first + count
            if self._reserve is not None and end > self._limit:
                limit = end + RESERVE_BLOCK
                self._reserve(limit)
                self._limit = limit
            self._next = end
            return first
