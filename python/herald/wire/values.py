"""Herald's typed values (record ``fields``, ``MONITOR_REPLY`` data, info attributes).

Python ↔ Herald: ``bool`` ↔ bool, ``int`` ↔ int (-2^63..2^64-1), ``float`` ↔ float64,
``str`` ↔ string, ``bytes`` ↔ bytes, :class:`Time` (or an aware ``datetime`` when encoding) ↔ time,
``list``/``tuple`` ↔ array, ``dict`` (str keys, order kept) ↔ map.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Union

from .msgpack_codec import (
    I64_MIN,
    MAX_DEPTH,
    U64_MAX,
    DecodeError,
    Reader,
    Writer,
    time_ext,
)

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass(frozen=True, order=True)
class Time:
    """A point in time: integer nanoseconds since 1970-01-01T00:00:00Z."""

    ns: int

    @classmethod
    def from_datetime(cls, when: _dt.datetime) -> Time:
        if when.tzinfo is None:
            raise ValueError("a naive datetime is ambiguous; give it a tzinfo")
        delta = when - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        return cls(micros * 1000)

    @classmethod
    def now(cls) -> Time:
        import time

        return cls(time.time_ns())

    def to_datetime(self) -> _dt.datetime:
        """Returns the time as an aware UTC datetime (truncated to microseconds)."""
        return _EPOCH + _dt.timedelta(microseconds=self.ns // 1000)


Value = Union[bool, int, float, str, bytes, Time, List[Any], Dict[str, Any]]
Fields = Dict[str, Any]


class IntRangeError(ValueError):
    """An integer value outside Herald's integer range (-2^63..2^64-1, what i64 and u64
    hold): Python's ints are unbounded, MessagePack's are not. ``path`` names the field
    (``counter``, ``stats.max``, ``samples[3]``), ``value`` is the integer."""

    def __init__(self, value: int, path: str = "") -> None:
        where = f"field `{path}` holds" if path else "value"
        super().__init__(f"{where} {value}, outside the integer range -2^63..2^64-1")
        self.value = value
        self.path = path

    def within(self, step: str) -> IntRangeError:
        """The same error seen one level up: ``step`` (a name, or ``[index]``) before the
        path."""
        if not self.path:
            return IntRangeError(self.value, step)
        joint = "" if self.path.startswith("[") else "."
        return IntRangeError(self.value, f"{step}{joint}{self.path}")


def encode_value(w: Writer, value: Any, depth: int = 1) -> None:
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deep")
    if isinstance(value, bool):
        w.boolean(value)
    elif isinstance(value, int):
        if not I64_MIN <= value <= U64_MAX:
            raise IntRangeError(int(value))
        if value >= 0:
            w.uint(int(value))
        else:
            w.sint(value)
    elif isinstance(value, float):
        w.f64(value)
    elif isinstance(value, str):
        w.string(value)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        w.bin(bytes(value))
    elif isinstance(value, Time):
        w.time(value.ns)
    elif isinstance(value, _dt.datetime):
        w.time(Time.from_datetime(value).ns)
    elif isinstance(value, (list, tuple)):
        w.array_len(len(value))
        for index, item in enumerate(value):
            try:
                encode_value(w, item, depth + 1)
            except IntRangeError as err:
                raise err.within(f"[{index}]") from None
    elif isinstance(value, Mapping):
        encode_fields(w, value, depth + 1)
    elif value is None:
        raise ValueError("None (nil) is not a Herald value")
    else:
        raise TypeError(f"{type(value).__name__} is not a Herald value")


def encode_fields(w: Writer, fields: Mapping[str, Any], depth: int = 1) -> None:
    """Writes a map str → value, in the mapping's order."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deep")
    w.map_len(len(fields))
    for name, value in fields.items():
        if not isinstance(name, str):
            raise TypeError(f"field names are strings, not {type(name).__name__}")
        w.string(name)
        try:
            encode_value(w, value, depth)
        except IntRangeError as err:
            raise err.within(name) from None


class NotPlain(Exception):
    """A value that :func:`plain_fields` leaves to :func:`encode_fields` (which may refuse it)."""


# Types that msgpack's packer writes exactly as encode_value does (bool before int: exact types).
_PLAIN_TYPES = frozenset({str, bytes, bool, float})


def plain_value(value: Any, depth: int = 1) -> Any:
    """``value`` as plain values for :func:`~.msgpack_codec.pack`, which then writes the bytes
    :func:`encode_value` writes; raises NotPlain for anything else (datetime, bytearray, int
    subclasses, other mappings, out-of-range ints, None, …) so that the caller falls back to
    :func:`encode_value`, which writes it or refuses it (an int outside -2^63..2^64-1: IntRangeError
    naming the field)."""
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return value
    if kind is int:
        if I64_MIN <= value <= U64_MAX:
            return value
        raise NotPlain
    if kind is Time:
        return time_ext(value.ns)
    if depth >= MAX_DEPTH:
        raise NotPlain
    if kind is list or kind is tuple:
        return [plain_value(item, depth + 1) for item in value]
    if kind is dict:
        return plain_fields(value, depth + 1)
    raise NotPlain


def plain_fields(fields: Dict[str, Any], depth: int = 1) -> Dict[str, Any]:
    """``fields`` (a dict with str keys) as plain values, like :func:`plain_value`."""
    if type(fields) is not dict:
        raise NotPlain
    plain = {}
    for name, value in fields.items():
        if type(name) is not str:
            raise NotPlain
        kind = type(value)
        if kind in _PLAIN_TYPES or (kind is int and I64_MIN <= value <= U64_MAX):
            plain[name] = value
        else:
            plain[name] = plain_value(value, depth)
    return plain


def decode_value(r: Reader, depth: int = 1) -> Any:
    if depth > MAX_DEPTH:
        raise DecodeError("value nested too deep")
    b = r.peek()
    if b in (0xC2, 0xC3):
        return r.read_bool()
    if b < 0x80 or b >= 0xE0 or 0xCC <= b <= 0xD3:
        return r.read_integer()
    if b in (0xCA, 0xCB):
        return r.read_f64()
    if 0xA0 <= b <= 0xBF or 0xD9 <= b <= 0xDB:
        return r.read_str()
    if 0xC4 <= b <= 0xC6:
        return r.read_bin()
    if b == 0xD7:
        return Time(r.read_time())
    if 0x90 <= b <= 0x9F or b in (0xDC, 0xDD):
        return [decode_value(r, depth + 1) for _ in range(r.read_array_len())]
    if 0x80 <= b <= 0x8F or b in (0xDE, 0xDF):
        return decode_fields(r, depth + 1)
    if b == 0xC0:
        raise DecodeError(f"nil at byte {r.pos} is not a value")
    if b in (0xC7, 0xC8, 0xC9, 0xD4, 0xD5, 0xD6, 0xD8):
        return Time(r.read_time())  # refuses it, naming its extension type
    raise DecodeError(f"0x{b:02x} at byte {r.pos} is not a Herald value")


def decode_fields(r: Reader, depth: int = 1) -> Fields:
    if depth > MAX_DEPTH:
        raise DecodeError("value nested too deep")
    fields: Fields = {}
    for _ in range(r.read_map_len()):
        name = r.read_str()
        if name in fields:
            raise DecodeError(f"field `{name}` appears twice")
        try:
            fields[name] = decode_value(r, depth)
        except DecodeError as err:
            raise DecodeError(f"field `{name}`: {err}") from None
    return fields


def value_to_json(value: Any) -> Any:
    """The value's meaning in the test vectors' JSON (see docs/protocol.md, Test vectors)."""
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {"float": "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, Time):
        return {"time": value.ns}
    if isinstance(value, list):
        return [value_to_json(item) for item in value]
    if isinstance(value, dict):
        return fields_to_json(value)
    raise TypeError(f"{type(value).__name__} is not a Herald value")


def fields_to_json(fields: Mapping[str, Any]) -> Dict[str, Any]:
    return {name: value_to_json(value) for name, value in fields.items()}


def value_from_json(meaning: Any) -> Any:
    """The inverse of :func:`value_to_json`."""
    if isinstance(meaning, dict):
        if set(meaning) == {"bytes"} and isinstance(meaning["bytes"], str):
            return bytes.fromhex(meaning["bytes"])
        if set(meaning) == {"time"} and isinstance(meaning["time"], int):
            return Time(meaning["time"])
        if set(meaning) == {"float"} and isinstance(meaning["float"], str):
            return float(meaning["float"])
        return fields_from_json(meaning)
    if isinstance(meaning, list):
        return [value_from_json(item) for item in meaning]
    return meaning


def fields_from_json(meaning: Mapping[str, Any]) -> Fields:
    return {name: value_from_json(value) for name, value in meaning.items()}
