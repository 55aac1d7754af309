"""One connection to a server: handshake, a reader thread, a batching writer thread that also
sends heartbeats, and the waiters of requests (ACK, OK, MONITOR_REPLY, INFO_REPLY,
QUERY_REPLY, ERROR by id)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from .errors import ConnectError, ConnectionClosed, HeraldError, ServerError, TimeoutError
from .subscription import Delivered, Subscription
from .wire.frames import (
    Ack,
    AckLevel,
    Deliver,
    Error,
    Frame,
    FrameBuffer,
    FrameError,
    Gap,
    Hello,
    InfoReplyFrame,
    Monitor,
    MonitorReply,
    Ok,
    Ping,
    Pong,
    QueryReply,
    Subscribe,
    Unsubscribe,
    Welcome,
    encode_frame,
)
from .wire.msgpack_codec import DecodeError, Writer

BATCH_BYTES = 64 * 1024
BATCH_DELAY = 0.005
MAX_UNACKED_BYTES = 16 * 1024 * 1024


class _Waiter:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseException] = None

    def set(self, result: Any = None, error: Optional[BaseException] = None) -> None:
        self.result, self.error = result, error
        self.event.set()

    def wait(self, timeout: Optional[float], what: str) -> Any:
        if not self.event.wait(timeout):
            raise TimeoutError(f"no answer to {what} within {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result


def publish_frame(ack_id: int, level: AckLevel, records: List[bytes]) -> bytes:
    """A PUBLISH frame around records already encoded."""
    w = Writer()
    w.array_len(3)
    w.uint(ack_id)
    w.uint(int(level))
    w.array_len(len(records))
    body = w.getvalue() + b"".join(records)
    return (len(body) + 1).to_bytes(4, "big") + b"\x10" + body


class Connection:
    def __init__(self, address: Tuple[str, int], name: str, token: str, timeout: float) -> None:
        self.address = address
        where = f"{address[0]}:{address[1]}"
        try:
            self._sock = socket.create_connection(address, timeout=timeout)
        except OSError as err:
            raise ConnectError(f"cannot connect to herald server {where}: {err}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = FrameBuffer()
        try:
            self._send_raw(encode_frame(Hello(name=name, token=token)))
            first = self._read_frame()
        except (OSError, DecodeError) as err:
            self._sock.close()
            raise ConnectError(f"handshake with herald server {where} failed: {err}") from None
        if isinstance(first, Error):
            self._sock.close()
            raise ConnectError(f"herald server {where} refused: {first.code}: {first.message}")
        if not isinstance(first, Welcome):
            self._sock.close()
            raise ConnectError(f"herald server {where} sent {type(first).__name__}, not WELCOME")
        self.welcome = first
        self._buffer.max_frame_bytes = first.max_frame_bytes + 1024
        heartbeat = max(first.heartbeat_ms, 1) / 1000.0
        self._heartbeat = min(heartbeat, 1.0)
        self._sock.settimeout(max(5.0, 3 * heartbeat))
        self._send_lock = threading.Lock()
        self._lock = threading.Condition()
        self._next_id = 1
        self._waiters: Dict[int, _Waiter] = {}
        self._waiter_kind: Dict[int, str] = {}
        self._subscriptions: Dict[int, Subscription] = {}
        self._unacked: Dict[int, int] = {}
        self._unacked_bytes = 0
        self._batch: List[bytes] = []
        self._batch_bytes = 0
        self._batch_started = 0.0
        self._closed: Optional[BaseException] = None
        self._last_sent = time.monotonic()
        self._reader = threading.Thread(target=self._read_loop, name="herald-reader", daemon=True)
        self._writer = threading.Thread(target=self._write_loop, name="herald-writer", daemon=True)
        self._reader.start()
        self._writer.start()

    # ---- low level -------------------------------------------------------------------------

    def _send_raw(self, data: bytes) -> None:
        self._sock.sendall(data)

    def _send(self, data: bytes) -> None:
        with self._send_lock:
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            try:
                self._sock.sendall(data)
            except OSError as err:
                self._fail(ConnectionClosed(f"connection to {self._where()} lost: {err}"))
                raise ConnectionClosed(f"connection closed: {err}") from None
            self._last_sent = time.monotonic()

    def _where(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"

    def _read_frame(self) -> Frame:
        while True:
            frame = self._buffer.next_frame()
            if frame is not None:
                return frame
            data = self._sock.recv(256 * 1024)
            if not data:
                raise ConnectionClosed(f"herald server {self._where()} closed the connection")
            self._buffer.feed(data)

    def _new_id(self, kind: str) -> Tuple[int, _Waiter]:
        with self._lock:
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            ident = self._next_id
            self._next_id += 1
            waiter = _Waiter()
            self._waiters[ident] = waiter
            self._waiter_kind[ident] = kind
            return ident, waiter

    # ---- reader ----------------------------------------------------------------------------

    def _read_loop(self) -> None:
        try:
            while True:
                try:
                    frame = self._read_frame()
                except socket.timeout:
                    raise ConnectionClosed(
                        f"nothing from herald server {self._where()} for "
                        f"{self._sock.gettimeout()} s"
                    ) from None
                self._handle(frame)
        except (OSError, FrameError, DecodeError, HeraldError) as err:
            if not isinstance(err, HeraldError):
                err = ConnectionClosed(f"connection to {self._where()} lost: {err}")
            self._fail(err)

    def _handle(self, frame: Frame) -> None:  # noqa: C901 - one branch per frame type
        if isinstance(frame, Deliver):
            for entry in frame.entries:
                sub = self._subscriptions.get(entry.subscription)
                if sub is not None:
                    sub._deliver(Delivered(entry.seq, entry.received, entry.record))
        elif isinstance(frame, Ping):
            self._send(encode_frame(Pong()))
        elif isinstance(frame, Ack):
            with self._lock:
                size = self._unacked.pop(frame.ack_id, 0)
                self._unacked_bytes -= size
                self._lock.notify_all()
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
            with self._lock:
                size = self._unacked.pop(frame.cid, 0)
                self._unacked_bytes -= size
                self._lock.notify_all()
            self._answer(frame.cid, None, error)
        elif isinstance(frame, Pong):
            pass

    def _answer(self, ident: int, result: Any, error: Optional[BaseException] = None) -> None:
        with self._lock:
            waiter = self._waiters.pop(ident, None)
            self._waiter_kind.pop(ident, None)
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
            self._lock.notify_all()
        for waiter in waiters:
            waiter.set(None, error)
        for sub in subs:
            sub._end()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # ---- writer: batches and heartbeats ---------------------------------------------------

    def _write_loop(self) -> None:
        while True:
            with self._lock:
                if self._closed is not None:
                    return
                now = time.monotonic()
                if self._batch:
                    wait = self._batch_started + BATCH_DELAY - now
                else:
                    wait = self._last_sent + self._heartbeat - now
                if wait > 0:
                    self._lock.wait(wait)
                    continue
            try:
                if self._batch:
                    self.send_batch(if_any=True)
                else:
                    self._send(encode_frame(Ping()))
            except HeraldError:
                return

    def add_record(self, encoded: bytes) -> None:
        """Adds an encoded record to the open batch; sends the batch once it is full."""
        with self._lock:
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            if self._batch_bytes + len(encoded) > BATCH_BYTES and self._batch:
                full = True
            else:
                full = False
                if not self._batch:
                    self._batch_started = time.monotonic()
                    self._lock.notify_all()
                self._batch.append(encoded)
                self._batch_bytes += len(encoded)
        if full:
            self.send_batch()
            self.add_record(encoded)

    def send_batch(
        self,
        extra: Optional[List[bytes]] = None,
        level: AckLevel = AckLevel.RECEIVED,
        if_any: bool = False,
    ) -> Optional[Tuple[int, _Waiter]]:
        """Sends the open batch (plus ``extra`` records when given, in one frame of their own
        with ack ``level``); returns the id and waiter of the last frame sent. Without records
        and ``extra`` it sends an empty PUBLISH (a flush) unless ``if_any``."""
        with self._lock:
            while self._unacked_bytes > MAX_UNACKED_BYTES and self._closed is None:
                self._lock.wait(1.0)
        with self._send_lock:
            with self._lock:
                records, self._batch, self._batch_bytes = self._batch, [], 0
            if not records and extra is None and if_any:
                return None
            sent: List[Tuple[int, _Waiter, bytes]] = []
            if records or extra is None:
                ident, waiter = self._new_id("PUBLISH")
                sent.append((ident, waiter, publish_frame(ident, AckLevel.RECEIVED, records)))
            if extra is not None:
                ident, waiter = self._new_id("PUBLISH")
                sent.append((ident, waiter, publish_frame(ident, level, extra)))
            with self._lock:
                for ident, _, frame in sent:
                    self._unacked[ident] = len(frame)
                    self._unacked_bytes += len(frame)
            if self._closed is not None:
                raise ConnectionClosed(f"connection closed: {self._closed}")
            try:
                self._sock.sendall(b"".join(frame for _, _, frame in sent))
            except OSError as err:
                self._fail(ConnectionClosed(f"connection to {self._where()} lost: {err}"))
                raise ConnectionClosed(f"connection closed: {err}") from None
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

    def subscribe(self, sub_id: int, make_sub: Any, filt: Any, options: Any, timeout: float) -> Any:
        sub = make_sub()
        with self._lock:
            self._subscriptions[sub_id] = sub
        try:
            self.request(lambda cid: Subscribe(cid, sub_id, filt, options), timeout, "SUBSCRIBE")
        except BaseException:
            with self._lock:
                self._subscriptions.pop(sub_id, None)
            sub._end()
            raise
        return sub

    def unsubscribe(self, sub_id: int, timeout: float) -> None:
        with self._lock:
            if self._subscriptions.pop(sub_id, None) is None or self._closed is not None:
                return
        self.request(lambda cid: Unsubscribe(cid, sub_id), timeout, "UNSUBSCRIBE")

    def monitor(self, timeout: float) -> Dict[str, Any]:
        reply = self.request(Monitor, timeout, "MONITOR")
        assert isinstance(reply, MonitorReply)
        return dict(reply.data)

    def unacked(self) -> int:
        with self._lock:
            return len(self._unacked)

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def close(self) -> None:
        self._fail(ConnectionClosed("the client closed the connection"))
        self._sock.close()
        if self._reader is not threading.current_thread():
            self._reader.join(2.0)
        if self._writer is not threading.current_thread():
            self._writer.join(2.0)
