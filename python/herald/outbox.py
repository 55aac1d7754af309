"""What a connection has to publish: the open batch of encoded records, and every PUBLISH
frame sent and not yet acknowledged — the window a failover resends. A record too large for
a PUBLISH frame under the server's limit is refused before it gets in (RecordTooLargeError):
the server would close the connection for its frame, and a failover would resend it there
again and again. Not locked itself: the connection calls it under its lock.

Records are numbered from 1 in the order they are published, across connections (a failover
does not start again at 1): every PUBLISH frame with records is sent in the numbered form,
with the number of its first record (docs/protocol.md, Numbered records). With the producer
id the client gives in HELLO, the numbers let the servers drop the records a failover sends
again. The kept frames are resent as they are, numbers included."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .errors import BatchTooLargeError, RecordTooLargeError
from .numbering import Numbering
from .wire.frames import DEFAULT_MAX_FRAME_BYTES, AckLevel
from .wire.msgpack_codec import Reader, Writer
from .wire.record import Record

BATCH_BYTES = 64 * 1024
BATCH_DELAY = 0.005
MAX_UNACKED_BYTES = 16 * 1024 * 1024
# Room kept in every PUBLISH frame for its length, type, ack_id, ack level, record count and
# the number of its first record (at most 30 bytes; 32 as in the Rust client): a record may
# take the rest of the frame.
PUBLISH_HEADER_BYTES = 32


def publish_frame(ack_id: int, level: AckLevel, records: List[bytes], first_seq: int = 0) -> bytes:
    """A PUBLISH frame around records already encoded: numbered from ``first_seq`` when it is
    not 0 (a fourth body element after the records), else in the three-element form."""
    w = Writer()
    w.array_len(4 if first_seq else 3)
    w.uint(ack_id)
    w.uint(int(level))
    w.array_len(len(records))
    head = w.getvalue()
    tail = b""
    if first_seq:
        w = Writer()
        w.uint(first_seq)
        tail = w.getvalue()
    length = 1 + len(head) + sum(len(encoded) for encoded in records) + len(tail)
    return b"".join([length.to_bytes(4, "big"), b"\x10", head, *records, tail])


def split_publish_frame(frame: bytes) -> List[Tuple[int, bytes]]:
    """The records of a numbered PUBLISH frame made by :func:`publish_frame`, each with its
    number; [] for an unnumbered one."""
    first, records = _publish_frame_records(frame)
    if first is None:
        return []
    return [(first + i, record) for i, record in enumerate(records)]


def _publish_frame_records(frame: bytes) -> Tuple[Optional[int], List[bytes]]:
    """The number of the first record of a PUBLISH frame made by :func:`publish_frame`
    (None for an unnumbered one) and its encoded records."""
    r = Reader(frame, 5)  # after the length and the type byte
    elements = r.read_array_len()
    r.read_uint()  # ack_id
    r.read_uint()  # ack level
    count = r.read_array_len()
    bounds = []
    for _ in range(count):
        start = r.pos
        r.skip_value()
        bounds.append((start, r.pos))
    records = [frame[start:end] for start, end in bounds]
    if elements < 4:
        return None, records
    return r.read_uint(), records


def _subject_of(encoded: bytes) -> Optional[str]:
    """The subject of an encoded record, for an error message; None if it does not decode."""
    try:
        return Record.from_bytes(encoded).subject
    except ValueError:
        return None


@dataclass
class Unacked:
    """A PUBLISH frame sent and not yet acknowledged."""

    frame: bytes
    records: int
    # The server's ERROR bad_record for this frame, kept until the ACK that follows it.
    refusal: Optional[Exception] = None


class Outbox:
    def __init__(
        self,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        numbering: Optional[Numbering] = None,
    ) -> None:
        self.batch: List[bytes] = []
        self.batch_bytes = 0
        self.batch_started = 0.0
        self._unacked: Dict[int, Unacked] = {}
        self.unacked_bytes = 0
        # The producer's numbers (shared with the disk buffer when there is one).
        self.numbering = numbering or Numbering(0)
        self.max_record_bytes = self.batch_limit = 0
        self.set_max_frame_bytes(max_frame_bytes)

    def set_max_frame_bytes(self, max_frame_bytes: int) -> None:
        """Takes the server's limit (from its WELCOME): the largest record a frame holds, and
        the most record bytes a batch gathers."""
        self.max_record_bytes = max(0, max_frame_bytes - PUBLISH_HEADER_BYTES)
        self.batch_limit = min(BATCH_BYTES, self.max_record_bytes)

    def check(self, encoded: bytes) -> None:
        """Raises RecordTooLargeError (naming the subject the record's bytes hold) if
        ``encoded`` cannot fit a PUBLISH frame."""
        if len(encoded) > self.max_record_bytes:
            raise RecordTooLargeError(len(encoded), self.max_record_bytes, _subject_of(encoded))

    def check_frame(self, records: List[bytes]) -> None:
        """Raises unless ``records`` fit one PUBLISH frame: RecordTooLargeError for a record
        too large alone, BatchTooLargeError (a ValueError) for records too many together."""
        total = sum(len(encoded) for encoded in records)
        if total <= self.max_record_bytes:
            return
        for encoded in records:
            self.check(encoded)
        raise BatchTooLargeError(len(records), total, self.max_record_bytes)

    # ---- the open batch --------------------------------------------------------------------

    def add(self, encoded: bytes) -> bool:
        """Adds a record to the open batch; False (and nothing added) when it would overflow
        a non-empty batch, which must be sent first. Raises RecordTooLargeError for a record
        that no frame can hold."""
        size = len(encoded)
        if size > self.max_record_bytes:
            self.check(encoded)
        if self.batch and self.batch_bytes + size > self.batch_limit:
            return False
        if not self.batch:
            self.batch_started = time.monotonic()
        self.batch.append(encoded)
        self.batch_bytes += size
        return True

    def batch_due(self) -> float:
        """When the open batch must be sent (monotonic seconds)."""
        return self.batch_started + BATCH_DELAY

    def take_batch(self) -> List[bytes]:
        records, self.batch, self.batch_bytes = self.batch, [], 0
        return records

    @property
    def next_seq(self) -> int:
        """The number the next record published gets."""
        return self.numbering.next_seq

    def number(self, count: int) -> int:
        """Numbers the next ``count`` records published (a batch about to be sent): returns
        the number of the first, or 0 (not numbered) for an empty batch, a flush."""
        return self.numbering.take(count)

    # ---- sent, not yet acknowledged --------------------------------------------------------

    def full(self) -> bool:
        """True while more bytes wait for acknowledgement than the window allows."""
        return self.unacked_bytes > MAX_UNACKED_BYTES

    def keep(self, ack_id: int, frame: bytes, records: int) -> None:
        self._unacked[ack_id] = Unacked(frame, records)
        self.unacked_bytes += len(frame)

    def refused(self, ack_id: int, error: Exception) -> Optional[bool]:
        """Notes the server's refusal of records of frame ``ack_id`` (its ACK follows): True
        the first time, False if already noted (the frame was resent after a failover), None
        if the frame is not waiting."""
        sent = self._unacked.get(ack_id)
        if sent is None:
            return None
        if sent.refusal is not None:
            return False
        sent.refusal = error
        return True

    def acknowledge(self, ack_id: int) -> Optional[Unacked]:
        """Forgets frame ``ack_id`` and returns it; None if it was not waiting."""
        sent = self._unacked.pop(ack_id, None)
        if sent is not None:
            self.unacked_bytes -= len(sent.frame)
        return sent

    def is_unacked(self, ack_id: int) -> bool:
        return ack_id in self._unacked

    def unacked(self) -> List[bytes]:
        """The frames to resend, oldest first."""
        return [sent.frame for sent in self._unacked.values()]

    def unacked_records(self) -> List[Tuple[int, bytes]]:
        """The numbered records of the frames not yet acknowledged, oldest first, as
        (number, encoded record): what the disk buffer keeps when the program ends while no
        server answers. Records of unnumbered frames are left out (there are none with a
        producer id)."""
        found: List[Tuple[int, bytes]] = []
        for sent in self._unacked.values():
            found.extend(split_publish_frame(sent.frame))
        return found

    def unacked_encoded(self) -> List[bytes]:
        """Every record of the frames not yet acknowledged, numbered or not, oldest first:
        what is lost when the connection ends for good."""
        found: List[bytes] = []
        for sent in self._unacked.values():
            found.extend(_publish_frame_records(sent.frame)[1])
        return found

    def records_held(self) -> int:
        """Records held without an acknowledgement: those of the frames not acknowledged and
        of the open batch."""
        return sum(sent.records for sent in self._unacked.values()) + len(self.batch)

    def unacked_count(self) -> int:
        return len(self._unacked)
