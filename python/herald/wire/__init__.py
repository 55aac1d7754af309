"""Herald's wire codec: records, values, filters and every frame, byte-compatible with Rust."""

from __future__ import annotations

from .frames import (
    AckLevel,
    Frame,
    FrameBuffer,
    FrameError,
    FrameType,
    decode_body,
    decode_frame,
    encode_frame,
)
from .meaning import frame_from_json, frame_to_json
from .msgpack_codec import DecodeError
from .record import Kind, Origin, Record

__all__ = [
    "AckLevel",
    "DecodeError",
    "Frame",
    "FrameBuffer",
    "FrameError",
    "FrameType",
    "Kind",
    "Origin",
    "Record",
    "decode_body",
    "decode_frame",
    "encode_frame",
    "frame_from_json",
    "frame_to_json",
]
