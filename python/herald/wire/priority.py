"""The ten priorities and priority sets (as ``herald_proto::priority``)."""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Iterable, List


class Priority(IntEnum):
    TRACE = 1
    DELOUSE = 2
    DEBUG = 3
    INFO = 4
    NOTICE = 5
    WARNING = 6
    ERROR = 8
    CRITICAL = 9
    ALERT = 10
    EMERGENCY = 11

    @property
    def bit(self) -> int:
        return 1 << int(self)

    @classmethod
    def from_number(cls, number: int) -> Priority:
        try:
            return cls(number)
        except ValueError:
            raise ValueError(
                f"priority {number} is not defined (expected 1..11 without 7)"
            ) from None

    @classmethod
    def parse(cls, text: str) -> Priority:
        """A name (any case) or a number, surrounding blanks ignored."""
        trimmed = text.strip()
        if trimmed.isdigit() and trimmed.isascii():
            return cls.from_number(int(trimmed))
        for priority in cls:
            if priority.name == trimmed.upper() and trimmed.isascii():
                return priority
        raise ValueError(
            f"unknown priority `{text}` (expected one of TRACE, DELOUSE, DEBUG, INFO, NOTICE, "
            "WARNING, ERROR, CRITICAL, ALERT, EMERGENCY or 1..11 without 7)"
        )


ALL_PRIORITIES: List[Priority] = list(Priority)
ALL_BITS = 0x0F7E


def _range(low: Priority, high: Priority) -> int:
    bits = 0
    for p in Priority:
        if low <= p <= high:
            bits |= p.bit
    return bits


class PrioritySet:
    """A set of priorities, as the bitmask used on the wire (bit n = priority n)."""

    __slots__ = ("bits",)

    def __init__(self, bits: int = ALL_BITS) -> None:
        self.bits = bits & ALL_BITS

    @classmethod
    def of(cls, priorities: Iterable[Priority]) -> PrioritySet:
        bits = 0
        for p in priorities:
            bits |= Priority(p).bit
        return cls(bits)

    @classmethod
    def at_least(cls, low: Priority) -> PrioritySet:
        return cls(_range(low, Priority.EMERGENCY))

    @classmethod
    def parse(cls, text: str) -> PrioritySet:
        """Parses ``>=WARNING``, ``INFO..ERROR``, ``=DEBUG``, ``DEBUG,>=ERROR``, ``*``, ``all``,
        and an exact set in braces, ``{DEBUG}``, ``{DEBUG,ERROR}`` (as the server reads them)."""
        bits = 0
        trimmed = text.strip()
        if trimmed.startswith("{") and trimmed.endswith("}"):
            trimmed = trimmed[1:-1]
        for term in trimmed.split(","):
            bits |= _parse_term(term)
        if bits == 0:
            raise ValueError(f"priority set `{text}` selects no priority")
        return cls(bits)

    def __contains__(self, priority: object) -> bool:
        return (
            isinstance(priority, int)
            and priority in Priority.__members__.values()
            and bool(self.bits & (1 << int(priority)))
        )

    def priorities(self) -> List[Priority]:
        return [p for p in Priority if self.bits & p.bit]

    def names(self) -> List[str]:
        return [p.name for p in self.priorities()]

    def is_all(self) -> bool:
        return self.bits == ALL_BITS

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrioritySet) and other.bits == self.bits

    def __hash__(self) -> int:
        return hash(self.bits)

    def __str__(self) -> str:
        return "*" if self.is_all() else ",".join(self.names())

    def __repr__(self) -> str:
        return f"PrioritySet(0x{self.bits:04x})"


def _parse_term(term: str) -> int:
    term = term.strip()
    if term == "*" or term.lower() == "all":
        return ALL_BITS
    if ".." in term:
        low, high = term.split("..", 1)
        return _range(Priority.parse(low), Priority.parse(high))
    split = next((i for i, c in enumerate(term) if c not in "<>="), None)
    if split is None:
        raise ValueError(f"unknown priority `{term}`")
    op, name = term[:split], term[split:]
    p = Priority.parse(name)
    if op in ("", "=", "=="):
        return p.bit
    if op == ">=":
        return _range(p, Priority.EMERGENCY)
    if op == "<=":
        return _range(Priority.TRACE, p)
    if op == ">":
        return _range(p, Priority.EMERGENCY) & ~p.bit
    if op == "<":
        return _range(Priority.TRACE, p) & ~p.bit
    raise ValueError(f"unknown priority `{term}`")


def priority_set(priorities: Any) -> PrioritySet:
    """A PrioritySet from what a caller may pass: None (every priority), a set such as
    ``">=WARNING"``, a Priority, a PrioritySet or an iterable of Priorities."""
    if priorities is None:
        return PrioritySet()
    if isinstance(priorities, PrioritySet):
        return priorities
    if isinstance(priorities, str):
        return PrioritySet.parse(priorities)
    if isinstance(priorities, Priority):
        return PrioritySet.of([priorities])
    return PrioritySet.of(priorities)
