"""A :class:`logging.Handler` that publishes to Herald and never blocks the caller.

``emit`` converts the record and puts it on a bounded buffer; a daemon thread connects
(lazily, with backoff), drains the buffer in batches and publishes. A full buffer drops the
record and counts it in :attr:`HeraldHandler.dropped`.
"""

from __future__ import annotations

import bisect
import collections
import logging as _logging
import os
import socket
import threading
import time
import unicodedata
from typing import Any, Deque, Dict, List, Optional, Union

from herald.client import Client, connect
from herald.errors import HeraldError
from herald.wire.priority import Priority
from herald.wire.record import Kind, Origin, Record

__all__ = ["HeraldHandler", "priority_for_level"]

_LEVELS = [
    (5, Priority.TRACE),
    (7, Priority.DELOUSE),
    (_logging.DEBUG, Priority.DEBUG),
    (_logging.INFO, Priority.INFO),
    (25, Priority.NOTICE),
    (_logging.WARNING, Priority.WARNING),
    (_logging.ERROR, Priority.ERROR),
    (_logging.CRITICAL, Priority.CRITICAL),
    (60, Priority.ALERT),
    (70, Priority.EMERGENCY),
]
_LEVEL_KEYS = [level for level, _ in _LEVELS]

_STANDARD = frozenset(_logging.LogRecord("x", _logging.INFO, "x", 1, "x", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}

_INT_MIN = -(1 << 63)
_INT_MAX = (1 << 64) - 1
_MAX_BACKOFF = 5.0


def priority_for_level(level: int) -> Priority:
    """The highest Herald priority whose Python level is at most ``level`` (TRACE below 5)."""
    i = bisect.bisect_right(_LEVEL_KEYS, level) - 1
    return _LEVELS[max(i, 0)][1]


def _subject(name: str) -> str:
    if not name:
        return "root"
    if all(c not in "*?" and unicodedata.category(c) != "Cc" for c in name):
        return name
    return "".join("_" if c in "*?" or unicodedata.category(c) == "Cc" else c for c in name)


def _field(value: Any) -> Any:
    if isinstance(value, bool) or isinstance(value, (float, str, bytes)):
        return value
    if isinstance(value, int):
        return value if _INT_MIN <= value <= _INT_MAX else str(value)
    try:
        return str(value)
    except Exception:
        return repr(value)


class HeraldHandler(_logging.Handler):
    """Publishes log records to a Herald server from a background thread."""

    def __init__(
        self,
        url: str = "herald://127.0.0.1:7400",
        name: Optional[str] = None,
        subject: Optional[str] = None,
        level: Union[int, str] = _logging.NOTSET,
        capacity: int = 10000,
        batch: int = 512,
        interval: float = 0.002,
        flush_timeout: float = 5.0,
    ) -> None:
        super().__init__(level)
        self.url = url
        self.client_name = name
        self.subject = subject
        self.capacity = max(1, int(capacity))
        self.batch = max(1, int(batch))
        self.interval = max(0.0, float(interval))
        self.flush_timeout = float(flush_timeout)
        self.dropped = 0
        self.sent = 0
        self._host = socket.gethostname()
        self._buffer: Deque[Record] = collections.deque()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._state = threading.Condition()
        self._flush_wanted = 0
        self._flush_done = 0
        self._busy = False
        self._client: Optional[Client] = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="herald-logging", daemon=True)
        self._thread.start()

    # ---- caller side -----------------------------------------------------------------------

    def emit(self, record: _logging.LogRecord) -> None:
        try:
            if len(self._buffer) >= self.capacity or self._closed:
                self.dropped += 1
                return
            self._buffer.append(self._convert(record))
            if not self._wake.is_set():
                self._wake.set()
        except Exception:
            self.handleError(record)

    def _convert(self, record: _logging.LogRecord) -> Record:
        text = record.getMessage()
        if record.exc_info:
            formatter = self.formatter or _logging.Formatter()
            if not record.exc_text:
                record.exc_text = formatter.formatException(record.exc_info)
        if record.exc_text:
            text = f"{text}\n{record.exc_text}" if text else record.exc_text
        if record.stack_info:
            text = f"{text}\n{record.stack_info}"
        fields: Dict[str, Any] = {}
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                fields[key] = _field(value)
        return Record(
            kind=Kind.LOG,
            subject=self.subject or _subject(record.name),
            time=int(record.created * 1e9),
            priority=priority_for_level(record.levelno),
            origin=Origin(
                host=self._host,
                process=f"{record.processName or 'python'}[{record.process or os.getpid()}]",
                thread=record.threadName or "",
                file=record.pathname or "",
                line=record.lineno,
                routine=record.funcName or "",
            ),
            text=text,
            fields=fields,
        )

    def flush(self) -> None:
        """Waits (at most ``flush_timeout``) until everything emitted so far is published and
        the client flushed."""
        self.wait_flushed(self.flush_timeout)

    def wait_flushed(self, timeout: Optional[float] = None) -> bool:
        """Like :meth:`flush` with its own ``timeout``; returns whether everything got out."""
        if not self._thread.is_alive():
            return not self._buffer
        deadline = time.monotonic() + (self.flush_timeout if timeout is None else timeout)
        with self._state:
            self._flush_wanted += 1
            wanted = self._flush_wanted
        self._wake.set()
        with self._state:
            while self._flush_done < wanted:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._state.wait(min(left, 0.05))
        return True

    def close(self) -> None:
        if not self._closed:
            try:
                self.wait_flushed(self.flush_timeout)
            finally:
                self._closed = True
                self._stop.set()
                self._wake.set()
                self._thread.join(self.flush_timeout + 1.0)
        super().close()

    # ---- background thread -----------------------------------------------------------------

    def _run(self) -> None:
        backoff = 0.05
        next_attempt = 0.0
        try:
            while True:
                stopping = self._stop.is_set()
                if self._client is None:
                    now = time.monotonic()
                    if stopping:
                        break
                    if now >= next_attempt:
                        try:
                            self._client = connect(self.url, name=self.client_name, timeout=2.0)
                            backoff = 0.05
                        except Exception:
                            next_attempt = time.monotonic() + backoff
                            backoff = min(backoff * 2, _MAX_BACKOFF)
                    if self._client is None:
                        self._wake.wait(max(0.0, min(next_attempt - time.monotonic(), 0.5)))
                        self._wake.clear()
                        continue
                self._drain()
                with self._state:
                    wanted = self._flush_wanted
                if wanted > self._flush_done and not self._buffer and self._client is not None:
                    try:
                        self._client.flush(self.flush_timeout)
                        with self._state:
                            self._flush_done = max(self._flush_done, wanted)
                            self._state.notify_all()
                    except Exception:
                        self._drop_client()
                    continue
                if stopping and not self._buffer:
                    break
                if not self._buffer:
                    self._wake.wait(0.5)
                    self._wake.clear()
                elif self.interval and len(self._buffer) < self.batch:
                    time.sleep(self.interval)
        finally:
            if self._client is not None:
                try:
                    self._client.close(self.flush_timeout)
                except Exception:
                    pass
                self._client = None
            with self._state:
                self._state.notify_all()

    def _drain(self) -> None:
        client = self._client
        if client is None:
            return
        taken: List[Record] = []
        while len(taken) < self.batch:
            try:
                taken.append(self._buffer.popleft())
            except IndexError:
                break
        for i, rec in enumerate(taken):
            try:
                client.publish_record(rec)
                self.sent += 1
            except HeraldError:
                # Connection lost: keep the rest buffered (in order) and reconnect.
                self._buffer.extendleft(reversed(taken[i:]))
                self._drop_client()
                return
            except Exception:
                self.dropped += 1  # a record that cannot be encoded

    def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close(0.1)
            except Exception:
                pass
