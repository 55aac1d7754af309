"""Times as people write them, as the `herald` CLI reads them: ISO 8601 (UTC when no zone is
given; minutes or a date alone are fine) or relative to now (``now``, ``-1h``, ``-30m``,
``-2d``, ``-10s``)."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_RELATIVE = re.compile(r"^-(\d+(?:\.\d+)?)(ms|s|m|h|d)$")
_UNIT_NS = {"ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9}


def datetime_nanos(t: datetime) -> int:
    """Nanoseconds since the Unix epoch of a timezone-aware datetime."""
    if t.tzinfo is None or t.tzinfo.utcoffset(t) is None:
        raise ValueError(f"datetime {t} has no timezone")
    return (t - _EPOCH) // timedelta(microseconds=1) * 1000


def parse_time(text: str) -> int:
    """Nanoseconds since the Unix epoch; ValueError naming the text if it is neither form."""
    spec = text.strip()
    if spec == "now":
        return time.time_ns()
    relative = _RELATIVE.match(spec)
    if relative:
        return time.time_ns() - int(float(relative.group(1)) * _UNIT_NS[relative.group(2)])
    iso = spec[:-1] + "+00:00" if spec.endswith(("Z", "z")) else spec
    try:
        parsed = datetime.fromisoformat(iso)
    except ValueError:
        raise ValueError(
            f"time `{text}` is neither ISO 8601 (2026-11-20T02:00:00Z, 2026-11-20) "
            "nor relative (now, -1h, -30m, -2d)"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return datetime_nanos(parsed)
