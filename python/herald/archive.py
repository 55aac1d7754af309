"""Archive queries (QUERY / QUERY_REPLY): samples, buckets, values at a time and logs.

A stored record that does not decode (an old archive's, a newer server's) is left out, not
the whole query: by the server's archive, which says how many in its answer, or by this
client, which steps over it. Both are counted in ``Client.archive_skipped`` and the first of
each query is logged as a warning on the ``herald.client`` logger."""

from __future__ import annotations

import importlib
import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from .timespec import datetime_nanos, parse_time
from .wire.archive import (
    ArchiveReply,
    ArchiveRequest,
    AtQuery,
    AtValues,
    Buckets,
    BucketsQuery,
    Cursor,
    LogsQuery,
    Page,
    SamplesQuery,
    StoredRecord,
)
from .wire.frames import Query, QueryReply
from .wire.priority import Priority, priority_set

if TYPE_CHECKING:
    from .connection import Connection

TimeLike = Union[int, datetime, str]
PAGE_LIMIT = 1000

_log = logging.getLogger("herald.client")


def to_nanos(t: TimeLike) -> int:
    """Nanoseconds since the Unix epoch from an int (ns), a timezone-aware datetime, or a
    string (ISO 8601 or relative, see :mod:`herald.timespec`)."""
    if isinstance(t, datetime):
        return datetime_nanos(t)
    if isinstance(t, str):
        return parse_time(t)
    if isinstance(t, bool) or not isinstance(t, int):
        raise TypeError(
            f"time must be int nanoseconds, a datetime or a string, not {type(t).__name__}"
        )
    return t


def stored_dict(stored: StoredRecord) -> Dict[str, Any]:
    """An archived record as a flat dict: seq, received, time, subject, type, priority, text
    and its fields (a field never hides one of those keys)."""
    rec = stored.record
    out: Dict[str, Any] = {
        "seq": stored.seq,
        "received": stored.received,
        "time": rec.time,
        "subject": rec.subject,
        "type": rec.type,
        "priority": Priority(rec.priority),
        "text": rec.text,
    }
    for key, value in rec.fields.items():
        out.setdefault(key, value)
    return out


class ArchiveMixin:
    """The archive-query calls of :class:`herald.Client`."""

    _conn: Connection

    def _query(
        self, request: ArchiveRequest, timeout: float, what: str, earlier: int = 0
    ) -> Tuple[ArchiveReply, int]:
        """Sends one query; returns its answer and how many stored records were left out of it
        because they do not decode: by the server's archive (it says how many) or by this
        client (kept in the answer's ``undecodable``). They are counted in
        ``archive_skipped``; the first of a query (``earlier`` left out before) is logged."""
        frame = self._conn.request(lambda cid: Query(cid, request), timeout, "QUERY")
        assert isinstance(frame, QueryReply)
        reply = frame.reply
        here = reply.undecodable if isinstance(reply, (Page, AtValues)) else []
        skipped = frame.skipped + len(here)
        if skipped:
            self._conn.count_archive_skipped(skipped)
            if earlier == 0:
                why = here[0].reason if here else "the server's archive could not decode them"
                _log.warning(
                    "%s: left out %d archived record(s) that do not decode (%s); any more are "
                    "counted in archive_skipped",
                    what,
                    skipped,
                    why,
                )
        return reply, skipped

    def _pages(self, make: Any, timeout: float, what: str) -> List[StoredRecord]:
        records: List[StoredRecord] = []
        skipped = 0
        after: Optional[Cursor] = None
        while True:
            page, left_out = self._query(make(after), timeout, what, skipped)
            assert isinstance(page, Page)
            records.extend(page.records)
            skipped += left_out
            if page.next is None:  # an empty page with a cursor means keep asking
                return records
            after = page.next

    def samples(
        self,
        name: str,
        start: TimeLike,
        end: TimeLike,
        as_frame: bool = False,
        timeout: float = 30.0,
    ) -> Any:
        """Every archived sample of ``name`` in [start, end) as dicts (see
        :func:`stored_dict`), paging through the server's answers; with ``as_frame`` a pandas
        DataFrame (pandas must be installed)."""
        start_ns, end_ns = to_nanos(start), to_nanos(end)
        records = self._pages(
            lambda after: SamplesQuery(name, start_ns, end_ns, after, PAGE_LIMIT),
            timeout,
            f"samples of `{name}`",
        )
        rows = [stored_dict(s) for s in records]
        if as_frame:
            pandas = importlib.import_module("pandas")
            return pandas.DataFrame(rows)
        return rows

    def buckets(
        self,
        name: str,
        start: TimeLike,
        end: TimeLike,
        n: int,
        field: Optional[str] = None,
        timeout: float = 30.0,
    ) -> List[Dict[str, Any]]:
        """[start, end) cut into ``n`` buckets: ``start``, ``end``, ``count`` and per numeric
        field ``fields[name] = {count, min, max, mean, first, last}``."""
        request = BucketsQuery(name, to_nanos(start), to_nanos(end), n, field)
        reply, _ = self._query(request, timeout, f"buckets of `{name}`")
        assert isinstance(reply, Buckets)
        return [
            {
                "start": b.start,
                "end": b.end,
                "count": b.count,
                "fields": {
                    s.name: {
                        "count": s.count,
                        "min": s.min,
                        "max": s.max,
                        "mean": s.mean,
                        "first": s.first,
                        "last": s.last,
                    }
                    for s in b.fields
                },
            }
            for b in reply.buckets
        ]

    def values_at(
        self, names: Sequence[str], time: TimeLike, timeout: float = 30.0
    ) -> List[Optional[Dict[str, Any]]]:
        """For each name its last archived sample at or before ``time`` (None if none, or if
        it does not decode)."""
        reply, _ = self._query(AtQuery(list(names), to_nanos(time)), timeout, "values_at")
        assert isinstance(reply, AtValues)
        return [None if v is None else stored_dict(v) for v in reply.values]

    def logs(
        self,
        start: TimeLike,
        end: TimeLike,
        priority: Any = None,
        subject: Optional[str] = None,
        host: Optional[str] = None,
        process: Optional[str] = None,
        text: Optional[str] = None,
        timeout: float = 30.0,
    ) -> List[Dict[str, Any]]:
        """Archived log records in [start, end); ``priority`` takes a set such as
        ``">=WARNING"``, a Priority or a list of them."""
        start_ns, end_ns = to_nanos(start), to_nanos(end)
        prios = priority_set(priority)
        records = self._pages(
            lambda after: LogsQuery(
                start_ns, end_ns, prios, subject, host, process, text, after, PAGE_LIMIT
            ),
            timeout,
            "logs",
        )
        return [stored_dict(s) for s in records]
