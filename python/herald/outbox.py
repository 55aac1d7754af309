"""What a connection has to publish: the open batch of encoded records, and every PUBLISH
frame sent and not yet acknowledged — the window a failover resends. Not locked itself: the
connection calls it under its lock."""

from __future__ import annotations

import time
from typing import Dict, List

from .wire.frames import AckLevel
from .wire.msgpack_codec import Writer

BATCH_BYTES = 64 * 1024
BATCH_DELAY = 0.005
MAX_UNACKED_BYTES = 16 * 1024 * 1024


def publish_frame(ack_id: int, level: AckLevel, records: List[bytes]) -> bytes:
    """A PUBLISH frame around records already encoded."""
    w = Writer()
    w.array_len(3)
    w.uint(ack_id)
    w.uint(int(level))
    w.array_len(len(records))
    body = w.getvalue() + b"".join(records)
    return (len(body) + 1).to_bytes(4, "big") + b"\x10" + body


class Outbox:
    def __init__(self) -> None:
        self.batch: List[bytes] = []
        self.batch_bytes = 0
        self.batch_started = 0.0
        self._unacked: Dict[int, bytes] = {}
        self.unacked_bytes = 0

    # ---- the open batch --------------------------------------------------------------------

    def add(self, encoded: bytes) -> bool:
        """Adds a record to the open batch; False (and nothing added) when it would overflow
        a non-empty batch, which must be sent first."""
        if self.batch and self.batch_bytes + len(encoded) > BATCH_BYTES:
            return False
        if not self.batch:
            self.batch_started = time.monotonic()
        self.batch.append(encoded)
        self.batch_bytes += len(encoded)
        return True

    def batch_due(self) -> float:
        """When the open batch must be sent (monotonic seconds)."""
        return self.batch_started + BATCH_DELAY

    def take_batch(self) -> List[bytes]:
        records, self.batch, self.batch_bytes = self.batch, [], 0
        return records

    # ---- sent, not yet acknowledged --------------------------------------------------------

    def full(self) -> bool:
        """True while more bytes wait for acknowledgement than the window allows."""
        return self.unacked_bytes > MAX_UNACKED_BYTES

    def keep(self, ack_id: int, frame: bytes) -> None:
        self._unacked[ack_id] = frame
        self.unacked_bytes += len(frame)

    def acknowledge(self, ack_id: int) -> bool:
        """Forgets frame ``ack_id``; False if it was not waiting."""
        frame = self._unacked.pop(ack_id, None)
        if frame is None:
            return False
        self.unacked_bytes -= len(frame)
        return True

    def is_unacked(self, ack_id: int) -> bool:
        return ack_id in self._unacked

    def unacked(self) -> List[bytes]:
        """The frames to resend, oldest first."""
        return list(self._unacked.values())

    def unacked_count(self) -> int:
        return len(self._unacked)
