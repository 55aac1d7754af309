"""Counts of records a producer lost, by priority and by reason, and the record that reports
them to the server: the Rust logger's drop report (``herald.logger.dropped``, a WARNING with
the fields ``dropped``, ``dropped_by_priority`` and ``dropped_by_reason``; see
crates/herald-client/src/logger/drops.rs), so the live view, the monitor and the archive show
a Python producer's losses as they show a Rust one's."""

from __future__ import annotations

import os
import time
from typing import Dict, List

from .origin import HOST
from .wire.priority import Priority
from .wire.record import Kind, Origin, Record

DROP_REPORT_TYPE = "herald.logger.dropped"

# Reasons, as the Rust logger names them, and the disk buffer's own.
BUFFER_FULL = "buffer_full"  # the handler's memory buffer was full
REJECTED = "rejected"  # a record that cannot be sent (too large, not encodable)
DISK_QUOTA = "disk_quota"  # shed from the disk buffer when its quota was full
DISK_TORN = "disk_torn"  # cut from a torn segment tail after a crash
DISK_ERROR = "disk_error"  # the disk buffer could not write it (disk full, I/O error)
CLOSED = "closed"  # sent on a connection the server ended for good, never acknowledged


class DropCounts:
    """Records lost, by priority (wire value; 0: unknown) and by reason. Not locked: one
    thread counts."""

    def __init__(self) -> None:
        self.by_priority: Dict[int, int] = {}
        self.by_reason: Dict[str, int] = {}

    @property
    def total(self) -> int:
        return sum(self.by_reason.values())

    def count(self, priority: int, reason: str, n: int = 1) -> None:
        if n <= 0:
            return
        self.by_priority[priority] = self.by_priority.get(priority, 0) + n
        self.by_reason[reason] = self.by_reason.get(reason, 0) + n

    def add(self, other: DropCounts) -> None:
        for priority, n in other.by_priority.items():
            self.by_priority[priority] = self.by_priority.get(priority, 0) + n
        for reason, n in other.by_reason.items():
            self.by_reason[reason] = self.by_reason.get(reason, 0) + n

    def take(self) -> DropCounts:
        """These counts, leaving this one empty."""
        taken = DropCounts()
        taken.by_priority, self.by_priority = self.by_priority, {}
        taken.by_reason, self.by_reason = self.by_reason, {}
        return taken

    def report(self, subject: str) -> Record:
        """The WARNING record that reports these losses on ``subject``."""
        by_priority = {_priority_name(p): n for p, n in sorted(self.by_priority.items()) if n > 0}
        by_reason = {reason: n for reason, n in sorted(self.by_reason.items()) if n > 0}
        text = (
            f"logger dropped {self.total} records ({_describe(by_priority)}; "
            f"{_describe(by_reason)})"
        )
        return Record(
            kind=Kind.LOG,
            subject=subject,
            time=time.time_ns(),
            type=DROP_REPORT_TYPE,
            priority=Priority.WARNING,
            origin=Origin(host=HOST, process=f"python[{os.getpid()}]", routine=__name__),
            text=text,
            fields={
                "dropped": self.total,
                "dropped_by_priority": by_priority,
                "dropped_by_reason": by_reason,
            },
        )


def _priority_name(priority: int) -> str:
    try:
        return Priority(priority).name
    except ValueError:
        return "unknown"


def _describe(counts: Dict[str, int]) -> str:
    parts: List[str] = [f"{n} {name}" for name, n in counts.items()]
    return ", ".join(parts)
