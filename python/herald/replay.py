"""Sending what the disk buffer (``spool.py``) holds, oldest first, under the numbers the
records got when they went to disk, one step at a time: read about ``STEP_BYTES``, send them
in PUBLISH frames of consecutive numbers, wait for the server's acknowledgement, then tell
the buffer how far it got (which deletes the segments sent and writes the state down).

A step the server does not acknowledge (the connection was lost, or the acknowledgement is
late) is read again from disk next time: the client also sends its unacknowledged frames
again after a failover, so those records may reach the server twice, under the same producer
id and numbers, and the server drops the second copy (docs/protocol.md, Numbered records)."""

from __future__ import annotations

import time
from typing import Callable, List, Tuple

from .client import Client
from .errors import HeraldError, TimeoutError
from .spool import Spool

# Bytes read from disk and sent per step (one wait for an acknowledgement each).
STEP_BYTES = 1024 * 1024
# The most record bytes in one PUBLISH frame of a step (half the server's limit at most).
FRAME_BYTES = 256 * 1024
# How long one wait for an acknowledgement lasts before the connection is looked at again.
ACK_POLL = 0.25


def runs(records: List[Tuple[int, bytes]], limit: int) -> List[Tuple[int, List[bytes]]]:
    """``records`` (number, bytes; numbers rising) cut into frames of consecutive numbers and
    at most ``limit`` bytes (a record larger than that alone): (first number, records)."""
    frames: List[Tuple[int, List[bytes]]] = []
    first = expected = size = 0
    batch: List[bytes] = []
    for seq, record in records:
        if batch and (seq != expected or size + len(record) > limit):
            frames.append((first, batch))
            batch, size = [], 0
        if not batch:
            first = seq
        batch.append(record)
        size += len(record)
        expected = seq + 1
    if batch:
        frames.append((first, batch))
    return frames


def replay_step(
    client: Client, spool: Spool, timeout: float, reject: Callable[[bytes], None]
) -> bool:
    """Sends the next step of the disk buffer and waits (at most ``timeout``) for its
    acknowledgement; True if the server acknowledged it (the buffer forgets it), False if
    not (it will be read again). A record larger than the server takes is handed to
    ``reject`` (counted lost) and left out."""
    try:
        records = spool.read(STEP_BYTES)
        if not records:
            spool.rewind()  # a rewrite moved things, or everything is acknowledged
            records = spool.read(STEP_BYTES)
    except OSError:
        spool.rewind()
        return False
    if not records:
        # Nothing readable is left though the buffer says otherwise (it cannot, unless its
        # files were changed under it): forget it rather than look again and again.
        spool.acknowledge(spool.last_seq)
        return True
    largest = client.max_record_bytes
    sendable = []
    for seq, record in records:
        if len(record) > largest:
            reject(record)
        else:
            sendable.append((seq, record))
    limit = min(FRAME_BYTES, client.max_frame_bytes // 2)
    try:
        for first, batch in runs(sendable, limit):
            client.publish_numbered(batch, first)
        if not _acknowledged(client, timeout):
            spool.rewind()
            return False
    except (HeraldError, ValueError):
        spool.rewind()
        return False
    spool.acknowledge(records[-1][0])
    return True


def _acknowledged(client: Client, timeout: float) -> bool:
    """Waits for the server to acknowledge everything sent; False when the connection is
    lost meanwhile or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while client.connected:
        try:
            client.flush(max(0.01, min(ACK_POLL, deadline - time.monotonic())))
            return True
        except TimeoutError:
            if time.monotonic() >= deadline:
                return False
    return False
