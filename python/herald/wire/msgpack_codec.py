"""The MessagePack subset Herald uses, written in its canonical (smallest) form.

:class:`Writer` is the reference: hand-written so that every byte is under control:
non-negative integers always use the unsigned forms, floats are always float64, strings are
str8/16/32 and the only extension is Herald's time (type 1, 8 bytes). See docs/protocol.md.

:func:`pack` is the fast path for records: for plain values (exact ``str``, ``bytes``,
``bool``, ``int`` within i64, ``float``, ``list``, ``dict`` and :func:`time_ext`) the
``msgpack`` packer (its C extension when built) writes exactly the bytes :class:`Writer`
writes; callers check the types first and use :class:`Writer` for anything else.
"""

from __future__ import annotations

import struct
import threading
from typing import Any, Callable

try:
    import msgpack as _msgpack  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - msgpack is a dependency; Writer alone is complete
    _msgpack = None

MAX_DEPTH = 32
EXT_TIME = 1
I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1
U64_MAX = (1 << 64) - 1


class DecodeError(ValueError):
    """A frame, record or value that does not decode."""


HAVE_PACKER = _msgpack is not None
_I64 = struct.Struct(">q")
_packers = threading.local()


def thread_packer() -> Callable[[Any], bytes]:
    """This thread's ``pack`` of msgpack's packer (one per thread: a packer keeps a buffer
    between calls): float64 always, str8 and bin types, no timestamp extension."""
    try:
        return _packers.pack  # type: ignore[no-any-return]
    except AttributeError:
        assert _msgpack is not None
        packer = _msgpack.Packer(use_bin_type=True, use_single_float=False, datetime=False)
        _packers.pack = packer.pack
        return packer.pack  # type: ignore[no-any-return]


def pack(value: Any) -> bytes:
    """``value`` (plain values only, see the module doc) as canonical MessagePack."""
    return thread_packer()(value)


def time_ext(nanos: int) -> Any:
    """Herald's time extension (``d7 01`` + i64 big-endian) as a value for :func:`pack`."""
    assert _msgpack is not None
    return _msgpack.ExtType(EXT_TIME, _I64.pack(nanos))


class Writer:
    """Appends canonical MessagePack to a bytearray."""

    def __init__(self) -> None:
        self.out = bytearray()

    def getvalue(self) -> bytes:
        return bytes(self.out)

    def raw(self, data: bytes) -> None:
        self.out += data

    def uint(self, value: int) -> None:
        out = self.out
        if value < 0 or value > U64_MAX:
            raise ValueError(f"{value} is not an unsigned 64-bit integer")
        if value < 0x80:
            out.append(value)
        elif value <= 0xFF:
            out += b"\xcc" + value.to_bytes(1, "big")
        elif value <= 0xFFFF:
            out += b"\xcd" + value.to_bytes(2, "big")
        elif value <= 0xFFFFFFFF:
            out += b"\xce" + value.to_bytes(4, "big")
        else:
            out += b"\xcf" + value.to_bytes(8, "big")

    def sint(self, value: int) -> None:
        if value >= 0:
            if value > I64_MAX:
                raise ValueError(f"{value} does not fit a signed 64-bit integer")
            self.uint(value)
            return
        out = self.out
        if value >= -32:
            out.append(value & 0xFF)
        elif value >= -(1 << 7):
            out += b"\xd0" + value.to_bytes(1, "big", signed=True)
        elif value >= -(1 << 15):
            out += b"\xd1" + value.to_bytes(2, "big", signed=True)
        elif value >= -(1 << 31):
            out += b"\xd2" + value.to_bytes(4, "big", signed=True)
        elif value >= I64_MIN:
            out += b"\xd3" + value.to_bytes(8, "big", signed=True)
        else:
            raise ValueError(f"{value} does not fit a signed 64-bit integer")

    def f64(self, value: float) -> None:
        self.out += b"\xcb" + struct.pack(">d", value)

    def boolean(self, value: bool) -> None:
        self.out.append(0xC3 if value else 0xC2)

    def nil(self) -> None:
        self.out.append(0xC0)

    def string(self, text: str) -> None:
        data = text.encode("utf-8")
        n = len(data)
        if n < 32:
            self.out.append(0xA0 | n)
        elif n <= 0xFF:
            self.out += b"\xd9" + n.to_bytes(1, "big")
        elif n <= 0xFFFF:
            self.out += b"\xda" + n.to_bytes(2, "big")
        else:
            self.out += b"\xdb" + n.to_bytes(4, "big")
        self.out += data

    def opt_str(self, text: str | None) -> None:
        if text is None:
            self.nil()
        else:
            self.string(text)

    def bin(self, data: bytes) -> None:
        n = len(data)
        if n <= 0xFF:
            self.out += b"\xc4" + n.to_bytes(1, "big")
        elif n <= 0xFFFF:
            self.out += b"\xc5" + n.to_bytes(2, "big")
        else:
            self.out += b"\xc6" + n.to_bytes(4, "big")
        self.out += data

    def array_len(self, n: int) -> None:
        if n < 16:
            self.out.append(0x90 | n)
        elif n <= 0xFFFF:
            self.out += b"\xdc" + n.to_bytes(2, "big")
        else:
            self.out += b"\xdd" + n.to_bytes(4, "big")

    def map_len(self, n: int) -> None:
        if n < 16:
            self.out.append(0x80 | n)
        elif n <= 0xFFFF:
            self.out += b"\xde" + n.to_bytes(2, "big")
        else:
            self.out += b"\xdf" + n.to_bytes(4, "big")

    def time(self, nanos: int) -> None:
        self.out += b"\xd7\x01" + struct.pack(">q", nanos)


_INT_FORMS = {
    0xCC: (1, False),
    0xCD: (2, False),
    0xCE: (4, False),
    0xCF: (8, False),
    0xD0: (1, True),
    0xD1: (2, True),
    0xD2: (4, True),
    0xD3: (8, True),
}

# For skip_value: forms followed by a fixed number of bytes, by a length of 1, 2 or 4 bytes
# (then that many bytes; an extension also has its type byte), and arrays and maps by count.
_FIXED_SIZES = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8}
_FIXED_SIZES.update({b: size for b, (size, _) in _INT_FORMS.items()})
_FIXED_SIZES.update({0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17})
_SIZED = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}
_EXT_SIZED = {0xC7: 1, 0xC8: 2, 0xC9: 4}
_COUNTED = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}


class Reader:
    """Reads the MessagePack subset from a byte string, tracking the position."""

    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    def is_empty(self) -> bool:
        return self.pos >= len(self.data)

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def peek(self) -> int:
        if self.pos >= len(self.data):
            raise DecodeError(f"unexpected end of data at byte {self.pos}")
        return self.data[self.pos]

    def _take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise DecodeError(f"unexpected end of data at byte {self.pos} (need {n} bytes)")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def _byte(self) -> int:
        b = self.peek()
        self.pos += 1
        return b

    def _is_int(self, b: int) -> bool:
        return b < 0x80 or b >= 0xE0 or b in _INT_FORMS

    def _any_int(self, what: str) -> int:
        start = self.pos
        b = self._byte()
        if b < 0x80:
            return b
        if b >= 0xE0:
            return b - 0x100
        form = _INT_FORMS.get(b)
        if form is None:
            raise DecodeError(f"expected {what} at byte {start}, found 0x{b:02x}")
        size, signed = form
        return int.from_bytes(self._take(size), "big", signed=signed)

    def read_uint(self) -> int:
        start = self.pos
        value = self._any_int("an unsigned integer")
        if value < 0:
            raise DecodeError(f"expected an unsigned integer at byte {start}, found {value}")
        return value

    def read_integer(self) -> int:
        """Any integer MessagePack holds: -2^63..2^64-1."""
        return self._any_int("an integer")

    def read_int(self) -> int:
        start = self.pos
        value = self._any_int("an integer")
        if value > I64_MAX:
            raise DecodeError(f"integer {value} at byte {start} does not fit i64")
        return value

    def read_f64(self) -> float:
        start = self.pos
        b = self._byte()
        if b == 0xCB:
            return float(struct.unpack(">d", self._take(8))[0])
        if b == 0xCA:
            return float(struct.unpack(">f", self._take(4))[0])
        raise DecodeError(f"expected a float at byte {start}, found 0x{b:02x}")

    def read_bool(self) -> bool:
        start = self.pos
        b = self._byte()
        if b == 0xC2:
            return False
        if b == 0xC3:
            return True
        raise DecodeError(f"expected a boolean at byte {start}, found 0x{b:02x}")

    def read_nil(self) -> bool:
        """Consumes a nil and returns True, or returns False leaving anything else."""
        if self.peek() == 0xC0:
            self.pos += 1
            return True
        return False

    def read_str(self) -> str:
        start = self.pos
        b = self._byte()
        if 0xA0 <= b <= 0xBF:
            n = b & 0x1F
        elif b == 0xD9:
            n = self._take(1)[0]
        elif b == 0xDA:
            n = int.from_bytes(self._take(2), "big")
        elif b == 0xDB:
            n = int.from_bytes(self._take(4), "big")
        else:
            raise DecodeError(f"expected a string at byte {start}, found 0x{b:02x}")
        try:
            return self._take(n).decode("utf-8")
        except UnicodeDecodeError as err:
            raise DecodeError(f"invalid UTF-8 in the string at byte {start}") from err

    def opt_str(self) -> str | None:
        return None if self.read_nil() else self.read_str()

    def read_bin(self) -> bytes:
        start = self.pos
        b = self._byte()
        sizes = {0xC4: 1, 0xC5: 2, 0xC6: 4}
        if b not in sizes:
            raise DecodeError(f"expected bytes at byte {start}, found 0x{b:02x}")
        return self._take(int.from_bytes(self._take(sizes[b]), "big"))

    def read_array_len(self) -> int:
        start = self.pos
        b = self._byte()
        if 0x90 <= b <= 0x9F:
            return b & 0x0F
        if b == 0xDC:
            return int.from_bytes(self._take(2), "big")
        if b == 0xDD:
            return int.from_bytes(self._take(4), "big")
        raise DecodeError(f"expected an array at byte {start}, found 0x{b:02x}")

    def read_map_len(self) -> int:
        start = self.pos
        b = self._byte()
        if 0x80 <= b <= 0x8F:
            return b & 0x0F
        if b == 0xDE:
            return int.from_bytes(self._take(2), "big")
        if b == 0xDF:
            return int.from_bytes(self._take(4), "big")
        raise DecodeError(f"expected a map at byte {start}, found 0x{b:02x}")

    def read_time(self) -> int:
        start = self.pos
        marker = self.peek()
        type_at = {0xD4: 1, 0xD5: 1, 0xD6: 1, 0xD7: 1, 0xD8: 1, 0xC7: 2, 0xC8: 3, 0xC9: 5}
        at = start + type_at.get(marker, 0)
        if at > start and at < len(self.data) and self.data[at] != EXT_TIME:
            ext_type = self.data[at] - 256 if self.data[at] > 127 else self.data[at]
            raise DecodeError(
                f"MessagePack extension type {ext_type} at byte {start} is no Herald value "
                "type (extension 1 is time)"
            )
        if self._take(2) != b"\xd7\x01":
            raise DecodeError(f"expected a time (d7 01) at byte {start}")
        return int(struct.unpack(">q", self._take(8))[0])

    def skip_value(self) -> None:
        """Steps over one MessagePack value of any form (nil, extensions and float32 too)
        without decoding it: how a reader passes a record it cannot decode. Raises
        DecodeError if the bytes are not one whole value (where the next starts is lost)."""
        pending = 1
        while pending:
            pending -= 1
            start = self.pos
            b = self._byte()
            if b < 0x80 or b >= 0xE0:
                continue
            if b <= 0x8F:
                pending += 2 * (b & 0x0F)
            elif b <= 0x9F:
                pending += b & 0x0F
            elif b <= 0xBF:
                self._take(b & 0x1F)
            elif b in _FIXED_SIZES:
                self._take(_FIXED_SIZES[b])
            elif b in _SIZED:
                self._take(int.from_bytes(self._take(_SIZED[b]), "big"))
            elif b in _EXT_SIZED:
                self._take(1 + int.from_bytes(self._take(_EXT_SIZED[b]), "big"))
            elif b in _COUNTED:
                size, per_item = _COUNTED[b]
                pending += per_item * int.from_bytes(self._take(size), "big")
            else:
                raise DecodeError(f"0x{b:02x} at byte {start} starts no MessagePack value")
            if pending > self.remaining():  # every value takes at least one byte
                raise DecodeError(f"the value at byte {start} holds more than the data left")

    def expect_array(self, what: str, expected: int) -> None:
        found = self.read_array_len()
        if found != expected:
            raise DecodeError(f"{what} must be an array of {expected}, found {found}")

    def read_u32(self, field: str) -> int:
        value = self.read_uint()
        if value > 0xFFFFFFFF:
            raise DecodeError(f"{field} {value} does not fit u32")
        return value
