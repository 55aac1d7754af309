"""Times for archive queries: ISO 8601 and relative, as the CLI reads them."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

import pytest

from herald.archive import to_nanos
from herald.timespec import parse_time

H = 3600 * 10**9


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-11-20T02:00:00Z", datetime(2026, 11, 20, 2, tzinfo=timezone.utc)),
        ("2026-11-20T02:00:00+01:00", datetime(2026, 11, 20, 1, tzinfo=timezone.utc)),
        ("2026-11-20T02:00", datetime(2026, 11, 20, 2, tzinfo=timezone.utc)),
        ("2026-11-20", datetime(2026, 11, 20, tzinfo=timezone.utc)),
        ("2026-11-20T02:00:00.250Z", datetime(2026, 11, 20, 2, 0, 0, 250000, timezone.utc)),
    ],
)
def test_iso_times(text: str, expected: datetime) -> None:
    assert parse_time(text) == int(expected.timestamp()) * 10**9 + expected.microsecond * 1000


def test_relative_times() -> None:
    now = time.time_ns()
    assert abs(parse_time("now") - now) < H / 100
    assert abs(parse_time("-1h") - (now - H)) < H / 100
    assert abs(parse_time("-2d") - (now - 48 * H)) < H / 100
    assert abs(parse_time("-30m") - (now - H // 2)) < H / 100


@pytest.mark.parametrize("text", ["yesterday", "-1y", "2026-13-01", "+1h", ""])
def test_bad_times_are_named(text: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"time `{text}` is neither")):
        parse_time(text)


def test_to_nanos_takes_every_form() -> None:
    assert to_nanos(5) == 5
    assert to_nanos("1970-01-01T00:00:01Z") == 10**9
    assert to_nanos(datetime(1970, 1, 1, 0, 0, 2, tzinfo=timezone.utc)) == 2 * 10**9
    with pytest.raises(ValueError, match="no timezone"):
        to_nanos(datetime(2026, 1, 1))
    with pytest.raises(TypeError, match="not float"):
        to_nanos(1.5)  # type: ignore[arg-type]
