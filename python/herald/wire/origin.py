"""The origin of a record: where it comes from (host, process, thread, file, line, …), a map
with small integer keys (docs/protocol.md, Records)."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .msgpack_codec import U64_MAX, DecodeError, Reader, Writer
from .values import NotPlain

# Origin keys 0..10; `line` (4) and `stack_level` (8) are numbers, the rest strings.
_ORIGIN_NAMES = (
    "host",
    "process",
    "thread",
    "file",
    "line",
    "routine",
    "context",
    "stack_id",
    "stack_level",
    "log_id",
    "uri",
)
_ORIGIN_NUMBERS = {"line", "stack_level"}
_ORIGIN_NUMBER_KEYS = (4, 8)
_origin_values = operator.attrgetter(*_ORIGIN_NAMES)
_PLAIN_ORIGINS_MAX = 4096
_plain_origins: Dict[tuple[Any, ...], Dict[int, Any]] = {}


def _plain_origin(values: tuple[Any, ...]) -> Dict[int, Any]:
    parts = {}
    for key, value in enumerate(values):
        if value is None or value == "":
            continue
        if key in _ORIGIN_NUMBER_KEYS:
            if type(value) is not int or not 0 <= value <= U64_MAX:
                raise NotPlain
        elif type(value) is not str:
            raise NotPlain
        parts[key] = value
    return parts


@dataclass
class Origin:
    """Where a record comes from; empty strings and ``None`` numbers are left out."""

    host: str = ""
    process: str = ""
    thread: str = ""
    file: str = ""
    line: Optional[int] = None
    routine: str = ""
    context: str = ""
    stack_id: str = ""
    stack_level: Optional[int] = None
    log_id: str = ""
    uri: str = ""

    def _present(self) -> List[tuple[int, str, Any]]:
        parts = []
        for key, name in enumerate(_ORIGIN_NAMES):
            value = getattr(self, name)
            if value is not None and value != "":
                parts.append((key, name, value))
        return parts

    def is_empty(self) -> bool:
        return not self._present()

    def plain(self) -> Dict[int, Any]:
        """The origin map as plain values for :func:`pack` (as :meth:`encode` writes it);
        raises NotPlain for a value of an unexpected type. The map may be shared: read it
        only. A process writes few distinct origins, so they are kept by value."""
        values = _origin_values(self)
        line, level = values[4], values[8]
        # Only exact ints (or None) as numbers: 1.0 == 1 would find the map of line 1.
        if not (line is None or type(line) is int) or not (level is None or type(level) is int):
            return _plain_origin(values)
        try:
            parts = _plain_origins.get(values)
        except TypeError:  # an unhashable value, which is not plain either
            raise NotPlain from None
        if parts is None:
            parts = _plain_origin(values)
            if len(_plain_origins) >= _PLAIN_ORIGINS_MAX:
                _plain_origins.clear()
            _plain_origins[values] = parts
        return parts

    def encode(self, w: Writer) -> None:
        parts = self._present()
        w.map_len(len(parts))
        for key, name, value in parts:
            w.uint(key)
            if name in _ORIGIN_NUMBERS:
                w.uint(value)
            else:
                w.string(value)

    @classmethod
    def decode(cls, r: Reader) -> Origin:
        origin = cls()
        seen: set[int] = set()
        for _ in range(r.read_map_len()):
            key = r.read_uint()
            if key >= len(_ORIGIN_NAMES):
                raise DecodeError(f"unknown field {key} in origin")
            name = _ORIGIN_NAMES[key]
            if key in seen:
                raise DecodeError(f"field `{name}` appears twice in origin")
            seen.add(key)
            if name in _ORIGIN_NUMBERS:
                setattr(origin, name, r.read_uint())  # u64, as the server and Rust read it
            else:
                setattr(origin, name, r.read_str())
        return origin

    def to_json(self) -> Dict[str, Any]:
        return {name: value for _, name, value in self._present()}

    @classmethod
    def from_json(cls, meaning: Dict[str, Any]) -> Origin:
        return cls(**meaning)


__all__ = ["Origin"]
