"""Herald client library for Python: the wire codec (:mod:`herald.wire`) and a synchronous
client (:func:`connect`)."""

from __future__ import annotations

from .client import Client, connect
from .errors import (
    BatchTooLargeError,
    ConnectError,
    ConnectionClosed,
    HeraldError,
    RecordTooLargeError,
    RequestTooLargeError,
    ServerError,
    SpoolLockedError,
    TimeoutError,
    UrlError,
)
from .info import InfoChange
from .subscription import Delivered, Event, Interrupted, Subscription
from .url import ServerUrl, parse_url
from .wire import frames
from .wire.archive import Cursor, StoredRecord
from .wire.filter import DeliveryOptions, Filter, Policy
from .wire.frames import (
    AckLevel,
    Frame,
    FrameBuffer,
    FrameError,
    FrameType,
    decode_frame,
    encode_frame,
)
from .wire.info import ObjectData, Selection, TypeData
from .wire.meaning import frame_from_json, frame_to_json
from .wire.msgpack_codec import DecodeError
from .wire.priority import Priority, PrioritySet
from .wire.record import Kind, Origin, Record
from .wire.values import IntRangeError, Time

__version__ = "0.1.0"

__all__ = [
    "BatchTooLargeError",
    "Client",
    "ConnectError",
    "ConnectionClosed",
    "Delivered",
    "Event",
    "HeraldError",
    "InfoChange",
    "Interrupted",
    "RecordTooLargeError",
    "RequestTooLargeError",
    "ServerError",
    "SpoolLockedError",
    "ServerUrl",
    "Subscription",
    "TimeoutError",
    "UrlError",
    "connect",
    "parse_url",
    "AckLevel",
    "Cursor",
    "DecodeError",
    "DeliveryOptions",
    "Filter",
    "Frame",
    "FrameBuffer",
    "FrameError",
    "FrameType",
    "IntRangeError",
    "Kind",
    "ObjectData",
    "Origin",
    "Policy",
    "Priority",
    "PrioritySet",
    "Record",
    "Selection",
    "StoredRecord",
    "Time",
    "TypeData",
    "decode_frame",
    "encode_frame",
    "frame_from_json",
    "frame_to_json",
    "frames",
]
