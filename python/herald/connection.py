"""A client's connection: a reader thread, a batching writer thread that also sends
heartbeats, the waiters of requests (ACK, OK, MONITOR_REPLY, INFO_REPLY, QUERY_REPLY, ERROR by
id), and failover. When the link to a server fails, the reader moves to the next server of the
URL (see ``failover.py``), makes every subscription again and resends every PUBLISH frame the
old server had not acknowledged: the program sees at most a delay, as with the Rust client.

An INFO answer, or archive buckets or values, larger than a frame comes in several INFO_REPLY
or QUERY_REPLY parts under its cid, every one but the last marked ``more``: the reader joins
them and hands the waiter the whole answer. A
request larger than the server's frame limit is refused at the call (RequestTooLargeError),
never sent: the server would close the connection for it.

Every HELLO names the client's producer id, and every PUBLISH frame with records is numbered
(``outbox.py``), so that a server (or cluster) that already has a record resent after a
failover acknowledges it without routing it twice (docs/protocol.md, Numbered records).

An ERROR with a request's cid answers that request alone; the connection goes on. For a
PUBLISH it may be ``bad_record`` or ``denied``: the server refused some records, routed the
others, and the ACK that follows counts what it took (the difference is counted in
``refused_records``).
Only an ERROR with cid 0 (or a frame that cannot be read) ends the link."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .dialer import Dialer
from .errors import ConnectionClosed, HeraldError, RequestTooLargeError, ServerError
from .failover import Address, FailoverMixin
from .link import Link
from .numbering import Numbering
from .outbox import Outbox, publish_frame
from .subscription import Delivered, Subscription
from .waiter import Waiter
from .wire.frames import (
    Ack,
    AckLevel,
    Deliver,
    Error,
    Frame,
    FrameError,
    Gap,
    InfoReplyFrame,
    Monitor,
    MonitorReply,
    Ok,
    Ping,
    Pong,
    QueryReply,
    Unsubscribe,
    Welcome,
    encode_frame,
    frame_type,
)
from .wire.msgpack_codec import DecodeError

DEFAULT_RECONNECT_TIMEOUT = 30.0
# Errors another server would only repeat: the server refused what this client sends. (Only
# an ERROR with cid 0 ends a link; `bad_request` normally answers one request alone.)
FINAL_CODES = {"bad_frame", "bad_request", "handshake", "version", "unauthorized"}
# Refusals of some records of a PUBLISH (bad ones, or ones the identity may not publish): the
# others were routed, and an ACK counting them follows.
ACKED_REFUSALS = {"bad_record", "denied"}

_log = logging.getLogger("herald.client")


def _is_final(error: BaseException) -> bool:
    if isinstance(error, ServerError):
        return error.code in FINAL_CODES
    return isinstance(error, (FrameError, DecodeError))


class Connection(FailoverMixin):
    """Owns the link to the current server and everything that outlives it."""

    def __init__(
        self,
        servers: List[Address],
        index: int,
        link: Link,
        dialer: Dialer,
        connect_timeout: float,
        reconnect_timeout: float = DEFAULT_RECONNECT_TIMEOUT,
        numbering: Optional[Numbering] = None,
    ) -> None:
        self._servers = servers
        self._index = index
        self._link = link
        self._dialer = dialer
        self._connect_timeout = connect_timeout
        self.reconnect_timeout = reconnect_timeout
        self.failovers = 0
        # Records the server refused (sent, less what its ACKs counted); stored records left out
        # of archive answers because they do not decode (there or here).
        self.refused_records = 0
        self.archive_skipped = 0
        self._send_lock = threading.Lock()
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self._next_id = 1
        self._waiters: Dict[int, Waiter] = {}
        self._subscriptions: Dict[int, Subscription] = {}
        self._restore: Dict[int, Callable[[int], Frame]] = {}
        # The parts so far of INFO answers larger than a frame, by cid (see _part).
        self._partial: Dict[int, Union[InfoReplyFrame, QueryReply]] = {}
        self._outbox = Outbox(link.welcome.max_frame_bytes, numbering or Numbering(dialer.producer))
        self._closed: Optional[BaseException] = None
        # Records held without an acknowledgement when the connection ended for good.
        self.abandoned = 0
        self._down: Optional[str] = None
        self._last_sent = time.monotonic()
        self._reader = threading.Thread(target=self._read_loop, name="herald-reader", daemon=True)
        self._writer = threading.Thread(target=self._write_loop, name="herald-writer", daemon=True)
        self._reader.start()
        self._writer.start()

    @property
    def welcome(self) -> Welcome:
        return self._link.welcome

    @property
    def producer(self) -> int:
        """The producer id every HELLO of this connection carries (the same after failover)."""
        return self._dialer.producer

    @property
    def address(self) -> Tuple[str, int]:
        return self._link.address

    @property
    def max_record_bytes(self) -> int:
        """The largest encoded record a PUBLISH frame holds under the server's limit."""
        return self._outbox.max_record_bytes

    # ---- low level -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed is not None:
            raise ConnectionClosed(f"connection closed: {self._closed}")
        if self._down is not None:
            raise ConnectionClosed(self._down)

    def _send(self, data: bytes) -> None:
        with self._send_lock:
            self._check_open()
            link = self._link
            try:
                link.sock.sendall(data)
            except OSError as err:
                link.break_off()  # the reader notices and fails over (if it may)
                then = "; failing over" if self.reconnect_timeout > 0 else ""
                raise ConnectionClosed(f"connection to {link.where} lost ({err}){then}") from None
            self._last_sent = time.monotonic()

    def _new_ident(self) -> int:
        """A fresh cid or ack_id; call it under the lock."""
        if self._closed is not None:
            raise ConnectionClosed(f"connection closed: {self._closed}")
        ident = self._next_id
        self._next_id += 1
        return ident

    def _new_id(self, what: str) -> Tuple[int, Waiter]:
        with self._lock:
            ident = self._new_ident()
            waiter = Waiter()
            self._waiters[ident] = waiter
            return ident, waiter

    # ---- reader and failover ---------------------------------------------------------------

    def _read_loop(self) -> None:
        while True:
            link = self._link
            error = self._read_link(link)
            if self._stopping.is_set() or _is_final(error) or self.reconnect_timeout <= 0:
                self._fail(self._lost(link, error))
                return
            if not self._fail_over(link, error):
                self._fail(
                    ConnectionClosed(
                        f"{self._lost(link, error)}; no server of the URL answered within "
                        f"{self.reconnect_timeout} s"
                    )
                )
                return

    def _read_link(self, link: Link) -> BaseException:
        """Reads and handles frames until the link fails; returns why."""
        try:
            while True:
                try:
                    frame = link.read_frame()
                except socket.timeout:
                    return ConnectionClosed(
                        f"nothing from herald server {link.where} for {link.sock.gettimeout()} s"
                    )
                self._handle(frame)
        except (OSError, FrameError, DecodeError, HeraldError) as err:
            return err

    @staticmethod
    def _lost(link: Link, error: BaseException) -> BaseException:
        if isinstance(error, HeraldError):
            return error
        return ConnectionClosed(f"connection to {link.where} lost: {error}")

    def _handle(self, frame: Frame) -> None:  # noqa: C901 - one branch per frame type
        if isinstance(frame, Deliver):
            for entry in frame.entries:
                sub = self._subscriptions.get(entry.subscription)
                if sub is not None:
                    sub._deliver(Delivered(entry.seq, entry.received, entry.record))
            for skipped in frame.undecodable:
                sub = self._subscriptions.get(skipped.subscription)
                if sub is not None:
                    sub._undecodable(skipped.seq, skipped.record.reason)
        elif isinstance(frame, Ping):
            self._send(encode_frame(Pong()))
        elif isinstance(frame, Ack):
            refusal = self._acknowledged(frame.ack_id, frame.count)
            self._answer(frame.ack_id, frame, refusal)
        elif isinstance(frame, (InfoReplyFrame, QueryReply)):
            self._part(frame)
        elif isinstance(frame, (Ok, MonitorReply)):
            self._answer(frame.cid, frame)
        elif isinstance(frame, Gap):
            sub = self._subscriptions.get(frame.subscription)
            if sub is not None:
                sub._gap(frame)
        elif isinstance(frame, Error):
            error = ServerError(frame.code, frame.message)
            if frame.cid == 0:
                raise error
            if frame.code in ACKED_REFUSALS and self._records_refused(frame.cid, error):
                return  # the ACK that follows ends the frame
            # Any other answer to a PUBLISH (archive, bad_request) means nothing of it was
            # routed and no ACK follows: the frame is done, and is not resent.
            self._acknowledged(frame.cid)
            with self._lock:
                waited = frame.cid in self._waiters
            if not waited:
                _log.warning("herald server %s: %s", self._link.where, error)
            self._answer(frame.cid, None, error)
        elif isinstance(frame, Pong):
            pass

    def _part(self, frame: Union[InfoReplyFrame, QueryReply]) -> None:
        """Joins the parts of an answer larger than a frame (INFO objects and types, archive
        buckets and values, appended in order; the archive's skipped counts summed) and hands
        the waiter the whole answer when the last part (one without ``more``) comes. The parts
        of an answer nobody waits for any more (its call timed out) are dropped."""
        with self._lock:
            joined = self._partial.pop(frame.cid, None)
            if frame.cid not in self._waiters:
                return
            if joined is None:
                joined = frame
            elif isinstance(joined, QueryReply) and isinstance(frame, QueryReply):
                joined.reply.extend(frame.reply)
                joined.skipped += frame.skipped
            elif isinstance(joined, InfoReplyFrame) and isinstance(frame, InfoReplyFrame):
                joined.reply.extend(frame.reply)
            if frame.more:
                self._partial[frame.cid] = joined
                return
        joined.more = False
        self._answer(frame.cid, joined)

    def _records_refused(self, ack_id: int, error: ServerError) -> bool:
        """Keeps ``error`` (bad_record or denied) with PUBLISH frame ``ack_id`` until its ACK,
        and says why (once per frame) when nobody waits for it; False if no such frame waits."""
        with self._lock:
            first = self._outbox.refused(ack_id, error)
            if first is None:
                return False
            waited = ack_id in self._waiters
        if first and not waited:
            _log.warning(
                "herald server %s refused records of a PUBLISH batch (counted in "
                "refused_records): %s",
                self._link.where,
                error.message,
            )
        return True

    def _acknowledged(self, ident: int, count: Optional[int] = None) -> Optional[Exception]:
        """Releases PUBLISH frame ``ident`` (it will not be resent) and counts the records an
        ACK of ``count`` did not take; returns the refusal the server sent for it, if any."""
        with self._lock:
            sent = self._outbox.acknowledge(ident)
            if sent is None:
                return None
            if count is not None and count < sent.records:
                self.refused_records += sent.records - count
            self._lock.notify_all()
            return sent.refusal

    def count_archive_skipped(self, count: int) -> None:
        with self._lock:
            self.archive_skipped += count

    def _answer(self, ident: int, result: Any, error: Optional[BaseException] = None) -> None:
        with self._lock:
            waiter = self._waiters.pop(ident, None)
            self._partial.pop(ident, None)
        if waiter is not None:
            waiter.set(result, error)

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = error
            self.abandoned = self._outbox.records_held()
            waiters = list(self._waiters.values())
            self._waiters.clear()
            self._partial.clear()
            subs = list(self._subscriptions.values())
            self._subscriptions.clear()
            self._restore.clear()
            self._lock.notify_all()
        for waiter in waiters:
            waiter.set(None, error)
        for sub in subs:
            sub._end()
        if self.abandoned:
            _log.warning(
                "herald client ended with %d records no server acknowledged: %s",
                self.abandoned,
                error,
            )
        self._link.break_off()

    # ---- writer: batches and heartbeats ---------------------------------------------------

    def _write_loop(self) -> None:
        heartbeat = min(self._link.heartbeat, 1.0)
        while True:
            with self._lock:
                if self._closed is not None:
                    return
                now = time.monotonic()
                if self._outbox.batch:
                    wait = self._outbox.batch_due() - now
                elif self._down is not None:
                    wait = heartbeat
                else:
                    wait = self._last_sent + heartbeat - now
                if wait > 0:
                    self._lock.wait(wait)
                    continue
            try:
                if self._outbox.batch:
                    self.send_batch(if_any=True)
                else:
                    self._send(encode_frame(Ping()))
            except ConnectionClosed:
                continue

    def add_record(self, encoded: bytes) -> None:
        """Adds an encoded record to the open batch; sends the batch once it is full. Raises
        RecordTooLargeError for a record no PUBLISH frame can hold."""
        with self._lock:
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            first = not self._outbox.batch
            added = self._outbox.add(encoded)
            if first and added:
                self._lock.notify_all()  # the writer sends the batch when it is due
        if not added:
            self.send_batch()
            self.add_record(encoded)

    def send_batch(
        self,
        extra: Optional[List[bytes]] = None,
        level: AckLevel = AckLevel.RECEIVED,
        if_any: bool = False,
        wait: bool = False,
        first_seq: int = 0,
    ) -> Optional[Tuple[int, Waiter]]:
        """Sends the open batch (plus ``extra`` records when given, in one frame of their own
        with ack ``level``). Without records and ``extra`` it sends an empty PUBLISH (a flush)
        unless ``if_any``. With ``wait`` it returns the id and waiter of the last frame sent,
        for :meth:`wait`: its ACK, or the ServerError the server answered it with (for
        ``bad_record``, once the ACK has come); nobody waits for the others. ``extra``
        records that do not fit one frame raise RecordTooLargeError (one record too large) or
        BatchTooLargeError, and nothing is sent. Every frame is kept until acknowledged; while
        failing over the frames wait for the next server. ``first_seq`` (not 0) sends the
        ``extra`` records under the numbers they were given before (by the disk buffer,
        from this connection's numbering) instead of numbering them now."""
        with self._lock:
            if extra is not None:
                self._outbox.check_frame(extra)
            while self._outbox.full() and self._closed is None:
                self._lock.wait(1.0)
        with self._send_lock:
            with self._lock:
                records = self._outbox.take_batch()
                if not records and extra is None and if_any:
                    return None
                # Numbered here, under both locks: the numbers follow the order of sending.
                batches: List[Tuple[int, AckLevel, List[bytes], int]] = []
                if records or extra is None:
                    first = self._outbox.number(len(records))
                    batches.append((self._new_ident(), AckLevel.RECEIVED, records, first))
                if extra is not None:
                    first = first_seq or self._outbox.number(len(extra))
                    batches.append((self._new_ident(), level, extra, first))
            sent = [
                (ident, publish_frame(ident, ack, batch, first))
                for ident, ack, batch, first in batches
            ]
            with self._lock:
                for (ident, frame), (_, _, batch, _) in zip(sent, batches):
                    self._outbox.keep(ident, frame, len(batch))
                waited = None
                if wait:
                    waited = sent[-1][0], Waiter()
                    self._waiters[waited[0]] = waited[1]
                down = self._down is not None
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            if not down:
                link = self._link
                try:
                    link.sock.sendall(b"".join(frame for _, frame in sent))
                except OSError:
                    link.break_off()  # the reader fails over and these frames are resent
                self._last_sent = time.monotonic()
            return waited

    def wait(self, waited: Tuple[int, Waiter], timeout: Optional[float], what: str) -> Any:
        """The answer to a frame sent with ``wait``; after it (or a timeout) nobody waits for
        the frame any more, so a late ERROR for it is logged."""
        ident, waiter = waited
        try:
            return waiter.wait(timeout, what)
        finally:
            self._answer(ident, None)

    # ---- requests --------------------------------------------------------------------------

    def _check_request(self, frame: Frame, data: bytes) -> None:
        """Raises RequestTooLargeError for a request frame (``data``, length prefix included)
        larger than the server accepts: it would close the connection for it."""
        size = len(data) - 4  # the length counts the type byte and the body
        limit = self._link.welcome.max_frame_bytes
        if size > limit:
            raise RequestTooLargeError(frame_type(frame).name, size, limit)

    def request(self, frame_for: Any, timeout: Optional[float], what: str) -> Any:
        """Sends ``frame_for(cid)`` and waits for its answer; a frame larger than the server
        accepts raises RequestTooLargeError and is not sent."""
        ident, waiter = self._new_id(what)
        try:
            frame = frame_for(ident)
            data = encode_frame(frame)
            self._check_request(frame, data)
            self._send(data)
        except BaseException:  # a lost connection, or a value the frame cannot hold
            self._answer(ident, None)
            raise
        return self.wait((ident, waiter), timeout, what)

    def subscribe(
        self,
        sub_id: int,
        sub: Subscription,
        frame_for: Callable[[int], Frame],
        what: str,
        timeout: float,
    ) -> Subscription:
        """Makes subscription ``sub_id`` with ``frame_for(cid)`` (SUBSCRIBE or INFO_SUBSCRIBE)
        and keeps the frame to make it again after a failover."""
        with self._lock:
            self._subscriptions[sub_id] = sub
            self._restore[sub_id] = frame_for
        try:
            self.request(frame_for, timeout, what)
        except BaseException:
            with self._lock:
                self._subscriptions.pop(sub_id, None)
                self._restore.pop(sub_id, None)
            sub._end()
            raise
        return sub

    def unsubscribe(self, sub_id: int, timeout: float) -> None:
        with self._lock:
            self._restore.pop(sub_id, None)
            if self._subscriptions.pop(sub_id, None) is None or self._closed is not None:
                return
            if self._down is not None:
                return  # the next server never hears of it
        self.request(lambda cid: Unsubscribe(cid, sub_id), timeout, "UNSUBSCRIBE")

    def monitor(self, timeout: float) -> Dict[str, Any]:
        reply = self.request(Monitor, timeout, "MONITOR")
        assert isinstance(reply, MonitorReply)
        return dict(reply.data)

    def unacked(self) -> int:
        with self._lock:
            return self._outbox.unacked_count()

    def unacked_records(self) -> List[Tuple[int, bytes]]:
        """The numbered records sent and not yet acknowledged, oldest first, as (number,
        encoded record)."""
        with self._lock:
            return self._outbox.unacked_records()

    def unacked_encoded(self) -> List[bytes]:
        """Every record sent and not yet acknowledged, numbered or not, oldest first."""
        with self._lock:
            return self._outbox.unacked_encoded()

    @property
    def down(self) -> bool:
        """True while the link is lost and the connection fails over (or has ended)."""
        return self._down is not None or self._closed is not None

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def close(self) -> None:
        self._stopping.set()
        self._fail(ConnectionClosed("the client closed the connection"))
        self._link.close()
        if self._reader is not threading.current_thread():
            self._reader.join(2.0)
        if self._writer is not threading.current_thread():
            self._writer.join(2.0)
