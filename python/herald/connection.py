"""A client's connection: a reader thread, a batching writer thread that also sends
heartbeats, the waiters of requests (ACK, OK, MONITOR_REPLY, INFO_REPLY, QUERY_REPLY, ERROR by
id), and failover. When the link to a server fails, the reader moves to the next server of the
URL (see ``failover.py``), makes every subscription again and resends every PUBLISH frame the
old server had not acknowledged: the program sees at most a delay, as with the Rust client."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .errors import ConnectionClosed, HeraldError, ServerError
from .failover import Address, FailoverMixin
from .link import Link
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
)
from .wire.msgpack_codec import DecodeError

DEFAULT_RECONNECT_TIMEOUT = 30.0
# Errors another server would only repeat: the server refused what this client sends.
FINAL_CODES = {"bad_frame", "handshake", "version", "unauthorized"}

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
        name: str,
        token: str,
        connect_timeout: float,
        reconnect_timeout: float = DEFAULT_RECONNECT_TIMEOUT,
    ) -> None:
        self._servers = servers
        self._index = index
        self._link = link
        self._name = name
        self._token = token
        self._connect_timeout = connect_timeout
        self.reconnect_timeout = reconnect_timeout
        self.failovers = 0
        self._send_lock = threading.Lock()
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self._next_id = 1
        self._waiters: Dict[int, Waiter] = {}
        self._subscriptions: Dict[int, Subscription] = {}
        self._restore: Dict[int, Callable[[int], Frame]] = {}
        self._outbox = Outbox()
        self._closed: Optional[BaseException] = None
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
    def address(self) -> Tuple[str, int]:
        return self._link.address

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

    def _new_id(self, what: str) -> Tuple[int, Waiter]:
        with self._lock:
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            ident = self._next_id
            self._next_id += 1
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
        elif isinstance(frame, Ping):
            self._send(encode_frame(Pong()))
        elif isinstance(frame, Ack):
            self._acknowledged(frame.ack_id)
            self._answer(frame.ack_id, frame)
        elif isinstance(frame, (Ok, MonitorReply, InfoReplyFrame, QueryReply)):
            self._answer(frame.cid, frame)
        elif isinstance(frame, Gap):
            sub = self._subscriptions.get(frame.subscription)
            if sub is not None:
                sub._gap(frame)
        elif isinstance(frame, Error):
            error = ServerError(frame.code, frame.message)
            if frame.cid == 0:
                raise error
            self._acknowledged(frame.cid)
            with self._lock:
                waited = frame.cid in self._waiters
            if not waited:
                _log.warning("herald server %s: %s", self._link.where, error)
            self._answer(frame.cid, None, error)
        elif isinstance(frame, Pong):
            pass

    def _acknowledged(self, ident: int) -> None:
        with self._lock:
            if self._outbox.acknowledge(ident):
                self._lock.notify_all()

    def _answer(self, ident: int, result: Any, error: Optional[BaseException] = None) -> None:
        with self._lock:
            waiter = self._waiters.pop(ident, None)
        if waiter is not None:
            waiter.set(result, error)

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = error
            waiters = list(self._waiters.values())
            self._waiters.clear()
            subs = list(self._subscriptions.values())
            self._subscriptions.clear()
            self._restore.clear()
            self._lock.notify_all()
        for waiter in waiters:
            waiter.set(None, error)
        for sub in subs:
            sub._end()
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
        """Adds an encoded record to the open batch; sends the batch once it is full."""
        with self._lock:
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            first = not self._outbox.batch
            added = self._outbox.add(encoded)
            if first:
                self._lock.notify_all()  # the writer sends the batch when it is due
        if not added:
            self.send_batch()
            self.add_record(encoded)

    def send_batch(
        self,
        extra: Optional[List[bytes]] = None,
        level: AckLevel = AckLevel.RECEIVED,
        if_any: bool = False,
    ) -> Optional[Tuple[int, Waiter]]:
        """Sends the open batch (plus ``extra`` records when given, in one frame of their own
        with ack ``level``); returns the id and waiter of the last frame sent. Without records
        and ``extra`` it sends an empty PUBLISH (a flush) unless ``if_any``. Every frame is
        kept until acknowledged; while failing over the frames wait for the next server."""
        with self._lock:
            while self._outbox.full() and self._closed is None:
                self._lock.wait(1.0)
        with self._send_lock:
            with self._lock:
                records = self._outbox.take_batch()
            if not records and extra is None and if_any:
                return None
            sent: List[Tuple[int, Waiter, bytes]] = []
            if records or extra is None:
                ident, waiter = self._new_id("PUBLISH")
                sent.append((ident, waiter, publish_frame(ident, AckLevel.RECEIVED, records)))
            if extra is not None:
                ident, waiter = self._new_id("PUBLISH")
                sent.append((ident, waiter, publish_frame(ident, level, extra)))
            with self._lock:
                for ident, _, frame in sent:
                    self._outbox.keep(ident, frame)
                down = self._down is not None
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            if not down:
                link = self._link
                try:
                    link.sock.sendall(b"".join(frame for _, _, frame in sent))
                except OSError:
                    link.break_off()  # the reader fails over and these frames are resent
                self._last_sent = time.monotonic()
            return sent[-1][0], sent[-1][1]

    # ---- requests --------------------------------------------------------------------------

    def request(self, frame_for: Any, timeout: Optional[float], what: str) -> Any:
        ident, waiter = self._new_id(what)
        try:
            self._send(encode_frame(frame_for(ident)))
        except HeraldError:
            self._answer(ident, None)
            raise
        try:
            return waiter.wait(timeout, what)
        finally:
            self._answer(ident, None)

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
