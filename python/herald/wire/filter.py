"""Subscription filters and delivery options (docs/protocol.md, Subscriptions and filters)."""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Dict, List, Optional

from .msgpack_codec import DecodeError, Reader, Writer
from .priority import ALL_BITS, Priority, PrioritySet
from .record import Kind

KINDS_ALL = 0b111
_KIND_ORDER = (Kind.LOG, Kind.MESSAGE, Kind.INFO)


def normalize_pattern(pattern: str, what: str) -> str:
    """Checks a glob (1..1024 bytes, no control characters); all-``*`` patterns become ``*``."""
    size = len(pattern.encode("utf-8"))
    if size == 0 or size > 1024:
        raise ValueError(f"bad {what} pattern: {size} bytes (expected 1..1024)")
    if any(unicodedata.category(c) == "Cc" for c in pattern):
        raise ValueError(f"bad {what} pattern {pattern!r}: control character")
    return "*" if set(pattern) == {"*"} else pattern


@dataclass
class Filter:
    """Every dimension must match; open dimensions are ``*``, all priorities, ``[]``, all kinds."""

    subject: str = "*"
    type: str = "*"
    priorities: PrioritySet = field(default_factory=PrioritySet)
    audience: List[str] = field(default_factory=list)
    kinds: int = KINDS_ALL

    def encode(self, w: Writer) -> None:
        subject = normalize_pattern(self.subject, "subject")
        type_name = normalize_pattern(self.type, "type")
        present = [
            subject != "*",
            type_name != "*",
            self.priorities.bits != ALL_BITS,
            bool(self.audience),
            self.kinds != KINDS_ALL,
        ]
        w.map_len(sum(present))
        if present[0]:
            w.uint(0)
            w.string(subject)
        if present[1]:
            w.uint(1)
            w.string(type_name)
        if present[2]:
            if self.priorities.bits == 0:
                raise ValueError("a filter needs at least one priority")
            w.uint(2)
            w.uint(self.priorities.bits)
        if present[3]:
            w.uint(3)
            w.array_len(len(self.audience))
            for name in self.audience:
                w.string(name)
        if present[4]:
            if not 0 < self.kinds <= KINDS_ALL:
                raise ValueError(f"kinds 0b{self.kinds:b} (expected 1..7)")
            w.uint(4)
            w.uint(self.kinds)

    @classmethod
    def decode(cls, r: Reader) -> Filter:
        f = cls()
        seen: set[int] = set()
        try:
            for _ in range(r.read_map_len()):
                key = r.read_uint()
                if key > 4:
                    raise DecodeError(f"invalid filter: unknown key {key}")
                if key in seen:
                    raise DecodeError(f"invalid filter: key {key} appears twice")
                seen.add(key)
                if key == 0:
                    f.subject = normalize_pattern(r.read_str(), "subject")
                elif key == 1:
                    f.type = normalize_pattern(r.read_str(), "type")
                elif key == 2:
                    bits = r.read_uint()
                    if bits == 0 or bits & ~ALL_BITS:
                        raise DecodeError(f"invalid filter: priority bits 0x{bits:x}")
                    f.priorities = PrioritySet(bits)
                elif key == 3:
                    f.audience = [r.read_str() for _ in range(r.read_array_len())]
                    for name in f.audience:
                        if not 1 <= len(name.encode("utf-8")) <= 64:
                            raise DecodeError(f"invalid filter: audience name {name!r}")
                else:
                    kinds = r.read_uint()
                    if not 0 < kinds <= KINDS_ALL:
                        raise DecodeError(f"invalid filter: kinds 0b{kinds:b}")
                    f.kinds = kinds
        except DecodeError:
            raise
        except ValueError as err:
            raise DecodeError(f"invalid filter: {err}") from err
        return f

    def to_json(self) -> Dict[str, Any]:
        return {
            "subject": self.subject,
            "type": self.type,
            "priority_bits": self.priorities.bits,
            "priorities": self.priorities.names(),
            "audience": list(self.audience),
            "kinds": [k.wire_name for k in _KIND_ORDER if self.kinds & (1 << int(k))],
        }

    @classmethod
    def from_json(cls, meaning: Dict[str, Any]) -> Filter:
        kinds = 0
        for name in meaning["kinds"]:
            kinds |= 1 << int(Kind[name.upper()])
        return cls(
            subject=meaning["subject"],
            type=meaning["type"],
            priorities=PrioritySet(meaning["priority_bits"]),
            audience=list(meaning["audience"]),
            kinds=kinds,
        )


class Policy(IntEnum):
    DROP_NEW = 0
    DROP_OLD = 1
    BLOCK = 2
    DISCONNECT = 3

    @property
    def wire_name(self) -> str:
        return self.name.lower().replace("_", "-")

    @classmethod
    def from_name(cls, name: str) -> Policy:
        return cls[name.upper().replace("-", "_")]


@dataclass
class DeliveryOptions:
    """How the server queues for one subscriber; ``None`` means the server's default."""

    policy: Policy = Policy.DROP_NEW
    max_records: Optional[int] = None
    max_bytes: Optional[int] = None
    block_timeout_ms: Optional[int] = None
    protected: Optional[Priority] = None
    latest_per_second: Optional[float] = None
    #: A queue group: each record the group's members match goes to one of them.
    group: Optional[str] = None

    def __post_init__(self) -> None:
        if self.group is not None:
            check_group(self.group)

    def encode(self, w: Writer) -> None:
        numbers = [
            (1, self.max_records),
            (2, self.max_bytes),
            (3, self.block_timeout_ms),
            (4, None if self.protected is None else int(self.protected)),
        ]
        count = (self.policy != Policy.DROP_NEW) + sum(v is not None for _, v in numbers)
        count += self.latest_per_second is not None
        count += self.group is not None
        w.map_len(count)
        if self.policy != Policy.DROP_NEW:
            w.uint(0)
            w.uint(int(self.policy))
        for key, value in numbers:
            if value is not None:
                w.uint(key)
                w.uint(value)
        if self.latest_per_second is not None:
            w.uint(5)
            w.f64(float(self.latest_per_second))
        if self.group is not None:
            w.uint(6)
            w.string(self.group)

    @classmethod
    def decode(cls, r: Reader) -> DeliveryOptions:
        o = cls()
        seen: set[int] = set()
        for _ in range(r.read_map_len()):
            key = r.read_uint()
            if key > 6:
                raise DecodeError(f"unknown field {key} in delivery options")
            if key in seen:
                raise DecodeError(f"delivery option {key} appears twice")
            seen.add(key)
            if key == 0:
                number = r.read_uint()
                if number > 3:
                    raise DecodeError(f"invalid policy: {number}")
                o.policy = Policy(number)
            elif key in (1, 2):
                number = r.read_uint()
                if number == 0:
                    raise DecodeError("invalid queue bound: 0 (must be at least 1)")
                if key == 1:
                    o.max_records = number
                else:
                    o.max_bytes = number
            elif key == 3:
                o.block_timeout_ms = r.read_uint()
            elif key == 4:
                try:
                    o.protected = Priority.from_number(r.read_uint())
                except ValueError as err:
                    raise DecodeError(f"invalid protected: {err}") from err
            elif key == 6:
                name = r.read_str()
                try:
                    check_group(name)
                except ValueError as err:
                    raise DecodeError(f"invalid group: {err}") from err
                o.group = name
            else:
                rate = r.read_f64()
                if not (math.isfinite(rate) and 0 < rate <= 10_000):
                    raise DecodeError(f"invalid latest_per_second: {rate} (expected (0, 10000])")
                o.latest_per_second = rate
        return o

    def to_json(self) -> Dict[str, Any]:
        meaning: Dict[str, Any] = {
            "policy": self.policy.wire_name,
            "max_records": self.max_records,
            "max_bytes": self.max_bytes,
            "block_timeout_ms": self.block_timeout_ms,
            "protected": None if self.protected is None else Priority(self.protected).name,
            "latest_per_second": self.latest_per_second,
            "group": self.group,
        }
        return meaning

    @classmethod
    def from_json(cls, meaning: Dict[str, Any]) -> DeliveryOptions:
        protected = meaning.get("protected")
        return cls(
            policy=Policy.from_name(meaning.get("policy", "drop-new")),
            max_records=meaning.get("max_records"),
            max_bytes=meaning.get("max_bytes"),
            block_timeout_ms=meaning.get("block_timeout_ms"),
            protected=None if protected is None else Priority[protected],
            latest_per_second=meaning.get("latest_per_second"),
            group=meaning.get("group"),
        )


#: Longest queue group name, in bytes.
MAX_GROUP_BYTES = 255


def check_group(name: str) -> None:
    """Raises ``ValueError`` naming what is wrong with queue group name ``name``."""
    size = len(name.encode())
    if size == 0:
        raise ValueError("empty (a queue group needs a name)")
    if size > MAX_GROUP_BYTES:
        raise ValueError(f"a name of {size} bytes is longer than {MAX_GROUP_BYTES}")
    for c in name:
        if unicodedata.category(c) == "Cc":
            raise ValueError(f"{name!r} holds the control character U+{ord(c):04X}")
