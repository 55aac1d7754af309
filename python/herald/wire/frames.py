"""Frames: ``u32 BE length | u8 type | MessagePack body`` (docs/protocol.md, Framing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import List, Optional, Tuple, Union

from .archive import (
    ArchiveReply,
    ArchiveRequest,
    decode_archive_reply,
    decode_archive_request,
    encode_archive_reply,
    encode_archive_request,
)
from .filter import DeliveryOptions, Filter
from .info import InfoReply, InfoRequest, Selection, decode_info_request, encode_info_request
from .msgpack_codec import DecodeError, Reader, Writer
from .priority import Priority
from .record import Record, UndecodableRecord, decode_record_or_skip
from .values import Fields, decode_fields, encode_fields

DEFAULT_MAX_FRAME_BYTES = 1 << 20
PROTOCOL_VERSION = 1


class FrameType(IntEnum):
    HELLO = 0x01
    WELCOME = 0x02
    PUBLISH = 0x10
    ACK = 0x11
    DELIVER = 0x12
    GAP = 0x13
    SUBSCRIBE = 0x20
    UNSUBSCRIBE = 0x21
    OK = 0x22
    MONITOR = 0x30
    MONITOR_REPLY = 0x31
    RELOAD = 0x32
    RELOAD_REPLY = 0x33
    PING = 0x40
    PONG = 0x41
    INFO = 0x50
    INFO_REPLY = 0x51
    INFO_SUBSCRIBE = 0x52
    QUERY = 0x60
    QUERY_REPLY = 0x61
    ERROR = 0x7F


class AckLevel(IntEnum):
    NONE = 0
    RECEIVED = 1
    STORED = 2


@dataclass
class Hello:
    name: str
    version: int = PROTOCOL_VERSION
    token: str = ""
    capabilities: List[str] = field(default_factory=list)
    heartbeat_ms: int = 0
    # The client's producer id (key 5, optional): chosen once, kept across reconnections,
    # the name under which it numbers its records. 0 = none (the key is left out).
    producer: int = 0


@dataclass
class Welcome:
    version: int
    server: str
    heartbeat_ms: int
    max_frame_bytes: int
    connection: int


@dataclass
class Publish:
    ack_id: int
    ack: AckLevel
    records: List[Record] = field(default_factory=list)
    # A numbered batch (a fourth body element): the producer's number of the first record,
    # the others numbered on from it one by one. 0 = not numbered (three elements).
    first_seq: int = 0


@dataclass
class Ack:
    ack_id: int
    level: AckLevel
    count: int


@dataclass
class DeliverEntry:
    subscription: int
    seq: int
    received: int
    record: Record
    # Between cluster members only (an entry of 6): the producer that numbered the record
    # and its number of it. 0 and 0 for an entry of 4, the only kind a client receives.
    producer: int = 0
    pseq: int = 0
    # Between cluster members only (an entry of 7): the queue groups the receiving member
    # gives the record to. Empty for the other entries.
    groups: List[str] = field(default_factory=list)


@dataclass
class UndecodableEntry:
    """A DELIVER entry whose record this client cannot decode: skipped, not delivered."""

    subscription: int
    seq: int
    received: int
    record: UndecodableRecord


@dataclass
class Deliver:
    entries: List[DeliverEntry] = field(default_factory=list)
    # Entries whose record does not decode (a newer server's field, an int outside i64 from
    # an old archive): the reader counts them on their subscription and reads on. Not
    # encoded: encode_frame writes ``entries`` only.
    undecodable: List[UndecodableEntry] = field(default_factory=list)


@dataclass
class Gap:
    subscription: int
    count: int
    first_seq: int
    last_seq: int
    by_priority: List[Tuple[Priority, int]] = field(default_factory=list)
    # The cluster member whose route to the server lost the records (its sequence numbers);
    # None for losses on the server itself.
    member: Optional[str] = None


@dataclass
class Subscribe:
    cid: int
    subscription: int
    filter: Filter = field(default_factory=Filter)
    options: DeliveryOptions = field(default_factory=DeliveryOptions)


@dataclass
class Unsubscribe:
    cid: int
    subscription: int


@dataclass
class Ok:
    cid: int


@dataclass
class Monitor:
    cid: int


@dataclass
class MonitorReply:
    cid: int
    data: Fields = field(default_factory=dict)


@dataclass
class Reload:
    cid: int


@dataclass
class ReloadReply:
    cid: int
    data: Fields = field(default_factory=dict)


@dataclass
class Info:
    cid: int
    request: InfoRequest


@dataclass
class InfoReplyFrame:
    cid: int
    reply: InfoReply
    # More parts of this answer follow under the same cid: an answer larger than a frame
    # comes in parts (a third body element, ``true``, written only when set).
    more: bool = False


@dataclass
class InfoSubscribe:
    cid: int
    subscription: int
    selection: Selection


@dataclass
class Query:
    cid: int
    request: ArchiveRequest


@dataclass
class QueryReply:
    cid: int
    reply: ArchiveReply
    # Stored records the server's archive left out because they do not decode there (a
    # third body element, written only when not 0 or when ``more`` follows it).
    skipped: int = 0
    # More parts of this answer follow under the same cid: buckets and values at an instant
    # too many for a frame come in parts (a fourth body element, ``true``).
    more: bool = False


@dataclass
class Ping:
    pass


@dataclass
class Pong:
    pass


@dataclass
class Error:
    cid: int
    code: str
    message: str


Frame = Union[
    Hello,
    Welcome,
    Publish,
    Ack,
    Deliver,
    Gap,
    Subscribe,
    Unsubscribe,
    Ok,
    Monitor,
    MonitorReply,
    Reload,
    ReloadReply,
    Info,
    InfoReplyFrame,
    InfoSubscribe,
    Query,
    QueryReply,
    Ping,
    Pong,
    Error,
]

FRAME_TYPES = {
    Hello: FrameType.HELLO,
    Welcome: FrameType.WELCOME,
    Publish: FrameType.PUBLISH,
    Ack: FrameType.ACK,
    Deliver: FrameType.DELIVER,
    Gap: FrameType.GAP,
    Subscribe: FrameType.SUBSCRIBE,
    Unsubscribe: FrameType.UNSUBSCRIBE,
    Ok: FrameType.OK,
    Monitor: FrameType.MONITOR,
    MonitorReply: FrameType.MONITOR_REPLY,
    Reload: FrameType.RELOAD,
    ReloadReply: FrameType.RELOAD_REPLY,
    Info: FrameType.INFO,
    InfoReplyFrame: FrameType.INFO_REPLY,
    InfoSubscribe: FrameType.INFO_SUBSCRIBE,
    Query: FrameType.QUERY,
    QueryReply: FrameType.QUERY_REPLY,
    Ping: FrameType.PING,
    Pong: FrameType.PONG,
    Error: FrameType.ERROR,
}


def frame_type(frame: Frame) -> FrameType:
    return FRAME_TYPES[type(frame)]


def encode_frame(frame: Frame) -> bytes:
    """Returns the whole frame, length prefix included."""
    w = Writer()
    _encode_body(w, frame)
    body = w.getvalue()
    return (len(body) + 1).to_bytes(4, "big") + bytes([frame_type(frame)]) + body


def _encode_body(w: Writer, f: Frame) -> None:  # noqa: C901 - one branch per frame type
    if isinstance(f, Hello):
        w.map_len(6 if f.producer else 5)
        w.uint(0)
        w.uint(f.version)
        w.uint(1)
        w.string(f.name)
        w.uint(2)
        w.string(f.token)
        w.uint(3)
        w.array_len(len(f.capabilities))
        for capability in f.capabilities:
            w.string(capability)
        w.uint(4)
        w.uint(f.heartbeat_ms)
        if f.producer:
            w.uint(5)
            w.uint(f.producer)
    elif isinstance(f, Welcome):
        w.map_len(5)
        w.uint(0)
        w.uint(f.version)
        w.uint(1)
        w.string(f.server)
        for key, number in enumerate([f.heartbeat_ms, f.max_frame_bytes, f.connection], 2):
            w.uint(key)
            w.uint(number)
    elif isinstance(f, Publish):
        if f.ack != AckLevel.NONE and f.ack_id == 0:
            raise ValueError("an acknowledgement needs an ack_id of 1 or more")
        w.array_len(4 if f.first_seq else 3)
        w.uint(f.ack_id)
        w.uint(int(f.ack))
        w.array_len(len(f.records))
        for record in f.records:
            record.encode(w)
        if f.first_seq:
            w.uint(f.first_seq)
    elif isinstance(f, Ack):
        _uints(w, f.ack_id, int(f.level), f.count)
    elif isinstance(f, Deliver):
        w.array_len(len(f.entries))
        for e in f.entries:
            size = 7 if e.groups else 6 if e.producer else 4
            w.array_len(size)
            w.uint(e.subscription)
            w.uint(e.seq)
            w.sint(e.received)
            e.record.encode(w)
            if size > 4:
                w.uint(e.producer)
                w.uint(e.pseq)
            if size == 7:
                w.array_len(len(e.groups))
                for group in e.groups:
                    w.string(group)
    elif isinstance(f, Gap):
        w.array_len(5 if f.member is None else 6)
        for number in (f.subscription, f.count, f.first_seq, f.last_seq):
            w.uint(number)
        w.map_len(len(f.by_priority))
        for priority, count in f.by_priority:
            w.uint(int(priority))
            w.uint(count)
        if f.member is not None:
            w.string(f.member)
    elif isinstance(f, Subscribe):
        w.array_len(4)
        w.uint(f.cid)
        w.uint(f.subscription)
        f.filter.encode(w)
        f.options.encode(w)
    elif isinstance(f, Unsubscribe):
        _uints(w, f.cid, f.subscription)
    elif isinstance(f, (Ok, Monitor, Reload)):
        _uints(w, f.cid)
    elif isinstance(f, (MonitorReply, ReloadReply)):
        w.array_len(2)
        w.uint(f.cid)
        encode_fields(w, f.data)
    elif isinstance(f, Info):
        w.array_len(2)
        w.uint(f.cid)
        encode_info_request(w, f.request)
    elif isinstance(f, InfoReplyFrame):
        w.array_len(3 if f.more else 2)
        w.uint(f.cid)
        f.reply.encode(w)
        if f.more:
            w.boolean(True)
    elif isinstance(f, InfoSubscribe):
        w.array_len(3)
        w.uint(f.cid)
        w.uint(f.subscription)
        f.selection.encode(w)
    elif isinstance(f, Query):
        w.array_len(2)
        w.uint(f.cid)
        encode_archive_request(w, f.request)
    elif isinstance(f, QueryReply):
        size = 4 if f.more else 3 if f.skipped else 2
        w.array_len(size)
        w.uint(f.cid)
        encode_archive_reply(w, f.reply)
        if size > 2:
            w.uint(f.skipped)
        if f.more:
            w.boolean(True)
    elif isinstance(f, (Ping, Pong)):
        pass
    elif isinstance(f, Error):
        w.array_len(3)
        w.uint(f.cid)
        w.string(f.code)
        w.string(f.message)
    else:
        raise TypeError(f"{type(f).__name__} is not a frame")


def _uints(w: Writer, *numbers: int) -> None:
    w.array_len(len(numbers))
    for number in numbers:
        w.uint(number)


def _request_cid(r: Reader) -> int:
    cid = r.read_uint()
    if cid == 0:
        raise DecodeError("invalid cid: 0 is reserved for errors of the whole connection")
    return cid


def _ack_level(r: Reader) -> AckLevel:
    level = r.read_uint()
    if level > 2:
        raise DecodeError(f"invalid acknowledgement level {level}")
    return AckLevel(level)


def decode_frame(data: bytes) -> Frame:
    """Decodes one whole frame (length prefix included); trailing bytes are an error."""
    if len(data) < 5:
        raise DecodeError(f"a frame has at least 5 bytes, got {len(data)}")
    length = int.from_bytes(data[:4], "big")
    if length != len(data) - 4:
        raise DecodeError(f"frame length {length} but {len(data) - 4} bytes follow it")
    return decode_body(data[4], data[5:])


def decode_body(type_byte: int, body: bytes) -> Frame:  # noqa: C901
    try:
        ft = FrameType(type_byte)
    except ValueError:
        raise DecodeError(f"unknown frame type 0x{type_byte:02x}") from None
    r = Reader(body)
    f: Frame
    if ft in (FrameType.HELLO, FrameType.WELCOME):
        f = _decode_handshake(r, ft)
    elif ft == FrameType.PUBLISH:
        # Three elements, or four when the producer numbers its records.
        size = r.read_array_len()
        if size not in (3, 4):
            raise DecodeError(f"PUBLISH must be an array of 3 or 4, found {size}")
        ack_id, ack = r.read_uint(), _ack_level(r)
        if ack != AckLevel.NONE and ack_id == 0:
            raise DecodeError("invalid ack_id: an acknowledgement needs an ack_id of 1 or more")
        records = []
        for index in range(r.read_array_len()):
            try:
                records.append(Record.decode(r))
            except DecodeError as err:
                raise DecodeError(f"invalid record: record {index}: {err}") from err
        f = Publish(ack_id, ack, records)
        if size == 4:
            f.first_seq = r.read_uint()
            if f.first_seq == 0:
                raise DecodeError("invalid first_seq: records are numbered from 1")
    elif ft == FrameType.ACK:
        r.expect_array("ACK", 3)
        f = Ack(r.read_uint(), _ack_level(r), r.read_uint())
    elif ft == FrameType.DELIVER:
        deliver = Deliver()
        for _ in range(r.read_array_len()):
            # Four elements, or on a cluster route six (the producer's id and number) or
            # seven (and the queue groups the receiving member serves).
            size = r.read_array_len()
            if size not in (4, 6, 7):
                raise DecodeError(f"DELIVER entry must be an array of 4, 6 or 7, found {size}")
            sub, seq, received = r.read_uint(), r.read_uint(), r.read_int()
            record = decode_record_or_skip(r)
            producer, pseq = (r.read_uint(), r.read_uint()) if size >= 6 else (0, 0)
            groups = [r.read_str() for _ in range(r.read_array_len())] if size == 7 else []
            if isinstance(record, Record):
                deliver.entries.append(
                    DeliverEntry(sub, seq, received, record, producer, pseq, groups)
                )
            else:
                deliver.undecodable.append(UndecodableEntry(sub, seq, received, record))
        f = deliver
    elif ft == FrameType.GAP:
        # Five elements, or six with the cluster member whose route lost the records.
        length = r.read_array_len()
        if length not in (5, 6):
            raise DecodeError(f"GAP must be an array of 5 or 6, found {length}")
        gap = Gap(r.read_uint(), r.read_uint(), r.read_uint(), r.read_uint())
        for _ in range(r.read_map_len()):
            number = r.read_uint()
            try:
                priority = Priority.from_number(number)
            except ValueError:
                raise DecodeError(f"invalid gap priority: {number} is not defined") from None
            gap.by_priority.append((priority, r.read_uint()))
        if length == 6:
            gap.member = r.read_str()
        f = gap
    elif ft == FrameType.SUBSCRIBE:
        r.expect_array("SUBSCRIBE", 4)
        f = Subscribe(_request_cid(r), r.read_uint(), Filter.decode(r), DeliveryOptions.decode(r))
    elif ft == FrameType.UNSUBSCRIBE:
        r.expect_array("UNSUBSCRIBE", 2)
        f = Unsubscribe(r.read_uint(), r.read_uint())
    elif ft == FrameType.OK:
        r.expect_array("OK", 1)
        f = Ok(r.read_uint())
    elif ft == FrameType.MONITOR:
        r.expect_array("MONITOR", 1)
        f = Monitor(_request_cid(r))
    elif ft == FrameType.MONITOR_REPLY:
        r.expect_array("MONITOR_REPLY", 2)
        f = MonitorReply(r.read_uint(), decode_fields(r))
    elif ft == FrameType.RELOAD:
        r.expect_array("RELOAD", 1)
        f = Reload(_request_cid(r))
    elif ft == FrameType.RELOAD_REPLY:
        r.expect_array("RELOAD_REPLY", 2)
        f = ReloadReply(r.read_uint(), decode_fields(r))
    elif ft == FrameType.INFO:
        r.expect_array("INFO", 2)
        f = Info(_request_cid(r), decode_info_request(r))
    elif ft == FrameType.INFO_REPLY:
        size = r.read_array_len()
        if size not in (2, 3):
            raise DecodeError(f"INFO_REPLY must be an array of 2 or 3, found {size}")
        f = InfoReplyFrame(r.read_uint(), InfoReply.decode(r))
        if size == 3:
            f.more = r.read_bool()
    elif ft == FrameType.INFO_SUBSCRIBE:
        r.expect_array("INFO_SUBSCRIBE", 3)
        f = InfoSubscribe(_request_cid(r), r.read_uint(), Selection.decode(r))
    elif ft == FrameType.QUERY:
        r.expect_array("QUERY", 2)
        f = Query(_request_cid(r), decode_archive_request(r))
    elif ft == FrameType.QUERY_REPLY:
        size = r.read_array_len()
        if size not in (2, 3, 4):
            raise DecodeError(f"QUERY_REPLY must be an array of 2 to 4, found {size}")
        f = QueryReply(r.read_uint(), decode_archive_reply(r))
        if size >= 3:
            f.skipped = r.read_uint()
        if size == 4:
            f.more = r.read_bool()
    elif ft == FrameType.PING:
        f = Ping()
    elif ft == FrameType.PONG:
        f = Pong()
    else:
        r.expect_array("ERROR", 3)
        f = Error(r.read_uint(), r.read_str(), r.read_str())
    if not r.is_empty():
        raise DecodeError(f"{r.remaining()} trailing bytes after the {ft.name} message")
    return f


def _decode_handshake(r: Reader, ft: FrameType) -> Frame:
    # Every key is required but HELLO's optional `producer` (key 5).
    names = ["version", "name", "token", "capabilities", "heartbeat_ms", "producer"]
    required = 5
    if ft == FrameType.WELCOME:
        names = ["version", "server", "heartbeat_ms", "max_frame_bytes", "connection"]
    values: dict[str, object] = {}
    for _ in range(r.read_map_len()):
        key = r.read_uint()
        if key >= len(names):
            raise DecodeError(f"unknown field {key} in {ft.name}")
        name = names[key]
        if name in values:
            raise DecodeError(f"field `{name}` appears twice in {ft.name}")
        if name in ("name", "token", "server"):
            values[name] = r.read_str()
        elif name == "capabilities":
            values[name] = [r.read_str() for _ in range(r.read_array_len())]
        else:
            values[name] = r.read_uint()
    for name in names[:required]:
        if name not in values:
            raise DecodeError(f"{ft.name} is missing required field `{name}`")
    if ft == FrameType.HELLO:
        return Hello(**values)  # type: ignore[arg-type]
    return Welcome(**values)  # type: ignore[arg-type]


class FrameError(DecodeError):
    """A byte stream that cannot be split into frames (the connection should close)."""


_HTTP_STARTS = (b"GET ", b"POST", b"PUT ", b"HEAD", b"HTTP")


class FrameBuffer:
    """Splits a byte stream into frames; partial frames wait for the rest of their bytes."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data

    def pending(self) -> int:
        """Bytes buffered but not yet returned as a frame."""
        return len(self._buf)

    def next_raw(self) -> Optional[bytes]:
        """Returns the next whole frame's bytes (length prefix included), or None."""
        if len(self._buf) < 4:
            return None
        head = bytes(self._buf[:4])
        if head in _HTTP_STARTS:
            raise FrameError("this is Herald's native protocol port; it received an HTTP request")
        length = int.from_bytes(head, "big")
        if length == 0:
            raise FrameError("empty frame")
        if length > self.max_frame_bytes:
            raise FrameError(
                f"frame of {length} bytes exceeds the maximum of {self.max_frame_bytes} bytes"
            )
        if len(self._buf) < 4 + length:
            return None
        raw = bytes(self._buf[: 4 + length])
        del self._buf[: 4 + length]
        return raw

    def next_frame(self) -> Optional[Frame]:
        raw = self.next_raw()
        return None if raw is None else decode_frame(raw)

    def __iter__(self) -> FrameBuffer:
        return self

    def __next__(self) -> Frame:
        frame = self.next_frame()
        if frame is None:
            raise StopIteration
        return frame
