"""A :class:`logging.Handler` that publishes to Herald and never blocks the caller.

``emit`` does the least it can in the caller's thread: it formats the message (as
:class:`logging.handlers.QueueHandler` does, so that later changes to mutable ``args`` do not
show), converts the ``extra`` fields if there are any, and appends that with the
:class:`~logging.LogRecord` to a bounded buffer. A full buffer drops the record and counts it in
:attr:`HeraldHandler.dropped`. A daemon thread connects (lazily, with backoff), turns the
buffered records into Herald records (exception text included: the traceback objects stay
with the LogRecord, so formatting it later gives the same text), packs them with one
:class:`~herald.wire.template.RecordTemplate` per call site, and sends each batch as one
PUBLISH frame. The caller wakes that thread only when it sleeps with nothing to do; while
records keep coming it gathers them every ``interval`` seconds. Under the GIL every
microsecond that thread (or any other) spends per record is added to the callers' mean cost,
so it does as little per record, and wakes as seldom, as it can.

A record that cannot be sent at all (larger than a PUBLISH frame holds under the server's
limit, or not encodable) is dropped by that thread, counted in both
:attr:`HeraldHandler.dropped` and :attr:`HeraldHandler.refused`, and the first of each kind is
explained on stderr (as :meth:`logging.Handler.handleError` does, and only while
``logging.raiseExceptions`` is true); it is never sent, so never resent either. An ``extra``
value that is not a Herald value is sent as its ``str()``: an int outside -2^63..2^64-1 as its
digits, rather than losing the whole record.
"""

from __future__ import annotations

import bisect
import collections
import logging as _logging
import os
import sys
import threading
import time
import unicodedata
from typing import Any, Deque, Dict, List, Optional, Tuple, Union

from herald.client import Client, connect
from herald.drops import BUFFER_FULL, CLOSED, REJECTED, DropCounts
from herald.errors import HeraldError, RecordTooLargeError, TimeoutError
from herald.origin import HOST, process_name
from herald.outbox import PUBLISH_HEADER_BYTES
from herald.replay import replay_step
from herald.segment import REPORT_RANK
from herald.spool import DEFAULT_BUFFER_QUOTA, Incoming, Spool
from herald.url import parse_url
from herald.wire.frames import DEFAULT_MAX_FRAME_BYTES
from herald.wire.priority import Priority
from herald.wire.record import Kind, Origin, Record
from herald.wire.template import RecordTemplate

from .storm import (
    DEFAULT_REPEATS,
    DEFAULT_WINDOW,
    HELD,
    STARTS,
    STORM_FIELD,
    Collapser,
    Summary,
    collapsing_fields,
    summary_fields,
)

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

_BARE_RECORD = _logging.LogRecord("x", _logging.INFO, "x", 1, "x", None, None)
# A LogRecord with no more attributes than a bare one carries no ``extra`` fields.
_BARE_SIZE = len(_BARE_RECORD.__dict__)
_STANDARD = frozenset(_BARE_RECORD.__dict__) | {"message", "asctime", "taskName"}

_INT_MIN = -(1 << 63)
_INT_MAX = (1 << 64) - 1
_MAX_BACKOFF = 5.0
_FRAME_BYTES = 256 * 1024  # at most; and half the server's max_frame_bytes (1 MiB by default)
_CACHE_MAX = 4096
_STORM_TICK = 0.1  # seconds between two looks for storm windows that are over
# Least time between two reports of losses (as the Rust logger's drop_report_interval).
DROP_REPORT_INTERVAL = 1.0
DROP_REPORT_SUBJECT = "herald.logging"
# Room made on disk for a drop report: more than one takes (about 400 bytes with every
# priority and reason in it).
_REPORT_ROOM_BYTES = 1024

# What emit keeps of a record: the LogRecord, its message, its converted ``extra`` fields.
_Entry = Tuple[_logging.LogRecord, str, Optional[Dict[str, Any]]]


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
    """An ``extra`` value as a Herald value: itself if it is one, else its ``str()`` (an int
    outside Herald's -2^63..2^64-1 too, rather than losing the whole log record)."""
    if isinstance(value, bool) or isinstance(value, (float, str, bytes)):
        return value
    if isinstance(value, int):
        return value if _INT_MIN <= value <= _INT_MAX else str(value)
    try:
        return str(value)
    except Exception:
        return repr(value)


def _full_text(
    record: _logging.LogRecord, text: str, formatter: Optional[_logging.Formatter]
) -> str:
    """The message followed by the exception's traceback and the stack, if any."""
    if record.exc_info and not record.exc_text:
        record.exc_text = (formatter or _logging.Formatter()).formatException(record.exc_info)
    if record.exc_text:
        text = f"{text}\n{record.exc_text}" if text else record.exc_text
    if record.stack_info:
        text = f"{text}\n{record.stack_info}"
    return text


def _say_logging_error(text: str, always: bool = False) -> None:
    """Writes ``text`` on stderr under ``--- Logging error ---``, as
    :meth:`logging.Handler.handleError` does: only while ``logging.raiseExceptions`` is true
    (unless ``always``), and a broken stderr is no reason to fail."""
    if not ((always or _logging.raiseExceptions) and sys.stderr):
        return
    try:
        sys.stderr.write(f"--- Logging error ---\n{text}\n")
    except Exception:
        pass


def _process(record: _logging.LogRecord) -> str:
    """The record's process as :meth:`herald.Client.log` writes it (``<program>[<pid>]``), or,
    for a record made in another process (a ``QueueHandler`` of a worker), that process's
    ``processName`` and pid."""
    if record.process is None or record.process == os.getpid():
        return process_name()
    return f"{record.processName or 'python'}[{record.process}]"


def _site(subject: Optional[str], record: _logging.LogRecord) -> Tuple[Any, ...]:
    """What a record shares with the others of its call site: all that goes in its template."""
    return (
        subject,
        record.name,
        record.levelno,
        record.pathname,
        record.lineno,
        record.funcName,
        record.threadName,
        record.processName,
        record.process,
    )


def _priority_of(data: bytes) -> int:
    """The priority of an encoded record; 0 if it does not decode."""
    try:
        return int(Record.from_bytes(data).priority)
    except ValueError:
        return 0


def _extra_fields(record: _logging.LogRecord) -> Optional[Dict[str, Any]]:
    """The record's ``extra`` attributes as Herald values, in the order they were set."""
    fields = {
        key: _field(value)
        for key, value in record.__dict__.items()
        if key not in _STANDARD and not key.startswith("_")
    }
    return fields or None


class HeraldHandler(_logging.Handler):
    """Publishes log records to a Herald server from a background thread.

    ``capacity`` bounds the buffer (records beyond it are dropped and counted); the thread
    publishes at most ``batch`` records at a time and, while records keep coming, gathers
    them every ``interval`` seconds; ``flush_timeout`` bounds :meth:`flush` and
    :meth:`close` (so ``logging.shutdown()``).

    ``dropped`` counts every record the handler drops: the buffer was full, or the record was
    refused. ``refused`` counts the refused ones alone: records that cannot be sent (larger
    than a PUBLISH frame holds under the server's limit, or not encodable); each kind is
    explained once on stderr. ``sent`` counts the records handed to the client; any of those
    the server then refuses (``bad_record``) are not in ``dropped``: the handler's client
    counts them in its ``refused_records``.

    Identical records (same logger subject, level and message) collapse by the server's
    log-storm rule before they are sent: past ``storm_repeats`` per ``storm_window``
    seconds the next one is sent marked ``herald.storm = "collapsing"``, the rest are held
    back and sent as one summary per window (``herald.repeated`` counts them; the storm's
    last is marked ``ended``, and :meth:`close` sends it at once). ``storm_repeats=0``
    sends every record. ``held`` counts the records held back into summaries.

    ``buffer_dir`` turns the disk buffer on (python/README.md, Disk buffer): while no
    server answers, the background thread moves what the memory buffer holds to segment files
    there, at most ``buffer_quota`` bytes of them (the lowest priorities shed first when it is
    full); once a server answers they are sent first, in order, under their own numbers, and
    what is still there when the program ends is sent at its next start. The directory is
    this producer's alone (SpoolLockedError, raised here, names the process that holds it).
    Every loss (``dropped``, and with a disk buffer what it sheds, ``spool_lost``) is reported
    to the server as a WARNING record of type ``herald.logger.dropped`` on ``subject`` (or
    ``herald.logging``), at most once a second, as the Rust logger reports its drops."""

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
        storm_window: float = DEFAULT_WINDOW,
        storm_repeats: int = DEFAULT_REPEATS,
        buffer_dir: Optional[str] = None,
        buffer_quota: int = DEFAULT_BUFFER_QUOTA,
    ) -> None:
        # A URL that does not parse is the program's error, raised here (UrlError), not a
        # server that never answers while records pile up.
        parse_url(url)
        # Locked here, in the caller's thread, before logging knows of the handler: a
        # directory another process holds is an error the program sees at once. The
        # background thread reads the segments (Spool.load) and is the only one to use it.
        self._spool = (
            Spool(buffer_dir, buffer_quota, load=False) if buffer_dir is not None else None
        )
        super().__init__(level)
        self.url = url
        self.client_name = name
        self.subject = subject
        self.capacity = max(1, int(capacity))
        self.batch = max(1, int(batch))
        self.interval = max(0.0, float(interval))
        self.flush_timeout = float(flush_timeout)
        self.dropped = 0
        self._drop_lock = threading.Lock()  # `dropped += 1` from several threads loses counts
        # Drops by Python level not yet reported.
        self._drops_by_level: Dict[int, int] = {}
        self._unreported = DropCounts()  # the background thread's own losses, to report
        self._last_report = 0.0
        # With a disk buffer: True once a server did not answer, until one does.
        self._offline = False
        self._largest = DEFAULT_MAX_FRAME_BYTES - PUBLISH_HEADER_BYTES
        self.refused = 0
        self._reported: set[str] = set()  # the kinds of refusal already explained
        self._said: set[str] = set()  # the reasons it could not connect, already said
        self.sent = 0
        self.held = 0
        self._storms: Collapser[_Entry] = Collapser(storm_window, storm_repeats)
        self._storm_tick = time.monotonic()
        self._buffer: Deque[_Entry] = collections.deque()
        self._idle = False
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._state = threading.Condition()
        self._flush_wanted = 0
        self._flush_done = 0
        self._client: Optional[Client] = None
        self._closed = False
        # The background thread's record templates, by call site (see _site).
        self._templates: Dict[Tuple[Any, ...], RecordTemplate] = {}
        self._thread = threading.Thread(target=self._run, name="herald-logging", daemon=True)
        self._thread.start()

    # ---- caller side -----------------------------------------------------------------------

    def handle(self, record: _logging.LogRecord) -> Any:
        """As :meth:`logging.Handler.handle` without taking the handler's lock: :meth:`emit`
        only appends to a deque, which is safe from any thread."""
        rv: Any = True
        if self.filters:
            rv = self.filter(record)
            if isinstance(rv, _logging.LogRecord):  # Python 3.12: a filter may return one
                record = rv
        if rv:
            self.emit(record)
        return rv

    def emit(self, record: _logging.LogRecord) -> None:
        try:
            if len(self._buffer) >= self.capacity or self._closed:
                self._count_drop(record)
                return
            extra = _extra_fields(record) if len(record.__dict__) > _BARE_SIZE else None
            self._buffer.append((record, record.getMessage(), extra))
            if len(self._buffer) > self.capacity:
                # Threads that checked the length at once each appended: take one back (the
                # newest, whichever thread's) so the bound holds, and count it.
                try:
                    self._buffer.pop()
                except IndexError:  # the sender took everything meanwhile: within bounds
                    pass
                else:
                    self._count_drop(record)
                    return
            if self._idle:
                self._idle = False
                self._wake.set()
        except Exception:
            self.handleError(record)

    def _count_drop(self, record: _logging.LogRecord) -> None:
        with self._drop_lock:
            self.dropped += 1
            level = record.levelno
            self._drops_by_level[level] = self._drops_by_level.get(level, 0) + 1

    @property
    def spool_lost(self) -> int:
        """Records the disk buffer lost: shed for its quota, cut from a torn tail at start,
        refused by a failing disk (0 without a disk buffer)."""
        return self._spool.lost if self._spool is not None else 0

    @property
    def spool_pending(self) -> bool:
        """True while the disk buffer holds records no server has acknowledged."""
        return self._spool is not None and self._spool.pending

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
                # With a disk buffer the thread also tries one last flush (at most a second)
                # before it keeps what is unacknowledged on disk and lets go of the directory.
                spool_time = min(self.flush_timeout, 1.0) + 0.5 if self._spool else 0.0
                self._thread.join(self.flush_timeout + 1.0 + spool_time)
        super().close()

    # ---- background thread -----------------------------------------------------------------

    def _run(self) -> None:
        try:
            if self._spool is not None:
                self._load_spool(self._spool)
            self._loop()
        finally:
            if self._spool is not None:
                self._close_spool(self._spool)
            lost = self._left_behind()
            if self._client is not None:
                try:
                    # With a disk buffer everything was flushed, or kept on disk, already.
                    self._client.close(self.flush_timeout if self._spool is None else 0.1)
                except Exception:
                    pass
                if self._spool is None:  # with one, what it held unacknowledged is on disk
                    abandoned = self._client.abandoned
                    with self._drop_lock:
                        self.dropped += abandoned
                    lost += abandoned
                self._client = None
            if lost:
                self._say_lost_at_close(lost)
            with self._state:
                self._state.notify_all()

    def _left_behind(self) -> int:
        """Counts, as dropped, the records still in memory at the end (without a disk
        buffer, when no server took them before the handler closed); returns how many."""
        left = 0
        while self._buffer:
            record, _, _ = self._buffer.popleft()
            self._count_drop(record)
            left += 1
        return left

    def _say_cannot_connect(self, error: Exception) -> None:
        """Says on stderr why no server can be reached (down, a refused token, a TLS file),
        the first time for each reason, as handleError does: the handler keeps trying."""
        reason = str(error)
        if reason in self._said or len(self._said) >= 8:
            return
        self._said.add(reason)
        _say_logging_error(
            f"HeraldHandler cannot connect to {self.url} yet: {reason}\nIt keeps trying; "
            f"records wait in its buffer{' and on disk' if self._spool is not None else ''}."
        )

    def _say_lost_at_close(self, lost: int) -> None:
        """Says on stderr what closing lost, which no server can be told of any more:
        records never sent, or sent and never acknowledged (``dropped`` counts both): even
        while ``logging.raiseExceptions`` is false."""
        _say_logging_error(
            f"HeraldHandler closed with {lost} records no server took (none answered at "
            f"{self.url} within flush_timeout); they are lost and counted in "
            f"HeraldHandler.dropped.",
            always=True,
        )

    def _loop(self) -> None:
        backoff = 0.05
        next_attempt = 0.0
        while True:
            stopping = self._stop.is_set()
            if self._client is None:
                if stopping:
                    return
                if self._spool is not None and self._offline:
                    self._spill(len(self._buffer))  # before an attempt that may take a while
                if time.monotonic() >= next_attempt:
                    try:
                        # Failover never gives up: while no server answers, the client keeps
                        # what it sent, its window fills, and the buffer drops and counts.
                        self._client = connect(
                            self.url,
                            name=self.client_name,
                            timeout=2.0,
                            reconnect_timeout=float("inf"),
                            # With a disk buffer: its producer id and numbers.
                            numbering=self._spool.numbering if self._spool else None,
                        )
                        backoff = 0.05
                    except Exception as err:
                        next_attempt = time.monotonic() + backoff
                        backoff = min(backoff * 2, _MAX_BACKOFF)
                        self._offline = True
                        self._say_cannot_connect(err)
                if self._client is None:
                    if self._spool is not None and self._offline:
                        self._spill(len(self._buffer))
                        self._report_losses()
                    self._wake.wait(max(0.0, min(next_attempt - time.monotonic(), 0.5)))
                    self._wake.clear()
                    continue
            if self._spool is not None and not self._spooled_step(self._spool):
                if stopping:
                    return  # what is left goes to disk (_close_spool)
                if self._offline:
                    self._pause()
                continue  # else the next step of the disk's records
            self._drain()
            if self._spool is None:
                self._report_losses()
            if self._storms.on and time.monotonic() - self._storm_tick >= _STORM_TICK:
                self._storm_tick = time.monotonic()
                self._send_summaries(self._storms.tick(self._storm_tick))
            if self._flush_if_wanted() or self._client is None:
                continue
            if stopping and not self._buffer:
                if self._storms.on:
                    ended = self._storms.finish()
                    if ended:
                        # Sent as the buffer is: the loop goes on until they are.
                        self._send_summaries(ended)
                        continue
                if self._spool is None:
                    self._report_losses(force=True)  # the client's close flushes it
                return
            self._pause()

    def _pause(self) -> None:
        """Sleeps ``interval`` while records keep coming (so that they gather into a batch),
        else until emit, flush or close wakes the thread."""
        if self._buffer:
            if self.interval and len(self._buffer) < self.batch:
                time.sleep(self.interval)
            return
        self._idle = True
        if self._buffer:  # emit appended before it could see _idle
            self._idle = False
            return
        self._wake.wait(0.5)
        self._wake.clear()
        self._idle = False

    def _flush_if_wanted(self) -> bool:
        """Flushes the client when a flush waits and the buffer is empty; True if it tried."""
        with self._state:
            wanted = self._flush_wanted
        if wanted <= self._flush_done or self._buffer or self._client is None:
            return False
        if self._spool is not None and self._spool.pending:
            return False
        try:
            self._client.flush(self.flush_timeout)
        except TimeoutError:
            # Slow acknowledgements (or a failover under way): the client keeps every frame
            # it has not had acknowledged; dropping it would lose them uncounted. Once the
            # handler is closing, the flush is given up (close has stopped waiting for it),
            # or the thread would try again for as long as no acknowledgement comes.
            if self._stop.is_set():
                with self._state:
                    self._flush_done = max(self._flush_done, wanted)
                    self._state.notify_all()
            return True
        except Exception:
            self._drop_client()
            return True
        with self._state:
            self._flush_done = max(self._flush_done, wanted)
            self._state.notify_all()
        return True

    def _drain(self) -> None:
        """Publishes what is buffered, ``batch`` records at a time, oldest first."""
        buffer = self._buffer
        while buffer and self._client is not None:
            if self._spool is not None and not self._client.connected:
                return  # lost meanwhile: the rest goes to disk, not into the client's window
            # Only this thread takes from the buffer: it holds at least len(buffer) records.
            self._publish([buffer.popleft() for _ in range(min(len(buffer), self.batch))])

    def _collapse(self, taken: List[_Entry]) -> List[_Entry]:
        """``taken`` without the records a log storm holds back; the one that starts a
        storm marked."""
        storms, kept = self._storms, []
        now = time.monotonic()
        for entry in taken:
            record, text, fields = entry
            if fields and STORM_FIELD in fields:  # a storm's mark or summary: sent as it is
                kept.append(entry)
                continue
            key = (self.subject or record.name, record.levelno, text)
            verdict = storms.offer(key, now, int(record.created * 1e9), entry)
            if verdict == HELD:
                self.held += 1
                continue
            if verdict == STARTS:
                entry = (record, text, {**(fields or {}), **collapsing_fields(storms.window)})
            kept.append(entry)
        return kept

    def _send_summaries(self, summaries: List[Summary[_Entry]]) -> None:
        """Queues storm summaries first in line: each the last record held back, marked."""
        for summary in reversed(summaries):
            record, text, fields = summary.record
            self._buffer.appendleft((record, text, {**(fields or {}), **summary_fields(summary)}))

    def _publish(self, taken: List[_Entry]) -> None:
        """Packs ``taken`` and sends it in PUBLISH frames within the server's frame limit."""
        client = self._client
        assert client is not None
        if self._storms.on:
            taken = self._collapse(taken)
        limit = min(_FRAME_BYTES, client.max_frame_bytes // 2)
        largest = client.max_record_bytes
        encode = self._encode
        frame: List[bytes] = []
        frame_bytes = first = 0  # first: the index in ``taken`` of the frame's first record
        for i, (record, text, fields) in enumerate(taken):
            try:
                encoded = encode(record, text, fields)
            except Exception as err:
                self._refuse(record, err)  # a record that cannot be encoded (a bad subject)
                continue
            if len(encoded) > largest:
                # The server would close the connection for its frame: never sent.
                subject = self.subject or _subject(record.name)
                self._refuse(record, RecordTooLargeError(len(encoded), largest, subject))
                continue
            if frame and frame_bytes + len(encoded) > limit:
                if not self._send(client, frame, taken[first:]):
                    return
                frame, frame_bytes, first = [], 0, i
            frame.append(encoded)
            frame_bytes += len(encoded)
        if frame:
            self._send(client, frame, taken[first:])

    def _send(self, client: Client, frame: List[bytes], unsent: List[_Entry]) -> bool:
        """Sends one PUBLISH frame of records at once, without waiting for its ACK (the
        connection keeps it until then, and resends it after a failover). One frame per
        batch, sent from this thread: the client's writer thread and the ACKs it would
        wait for stay out of the way of the threads that log. On a lost connection the
        ``unsent`` entries go back to the buffer, in order, and it returns False."""
        try:
            client.publish_encoded(frame)
        except ValueError:
            # The server's limit changed (a failover to a server with a smaller one) since
            # the frame was packed: nothing was sent; pack them again under the new limit.
            self._buffer.extendleft(reversed(unsent))
            return False
        except HeraldError:
            self._buffer.extendleft(reversed(unsent))
            self._drop_client()
            return False
        self.sent += len(frame)
        return True

    def _refuse(self, record: _logging.LogRecord, error: Exception) -> None:
        """Drops a record that cannot be sent, counts it in ``dropped`` and ``refused``, and
        says why on stderr the first time for each kind of error, as handleError does."""
        with self._drop_lock:
            self.dropped += 1
        self.refused += 1  # only the background thread refuses
        # Reported to the server as every loss is (`rejected`), with or without a disk buffer.
        self._unreported.count(int(priority_for_level(record.levelno)), REJECTED)
        kind = type(error).__name__
        if kind in self._reported:
            return
        self._reported.add(kind)
        _say_logging_error(
            f"HeraldHandler dropped the record of logger `{record.name}` "
            f"({record.pathname}:{record.lineno}): {error}\nRecords refused again for this "
            f"reason ({kind}) are dropped without a word; HeraldHandler.refused counts them."
        )

    def _encode(
        self, record: _logging.LogRecord, text: str, fields: Optional[Dict[str, Any]]
    ) -> bytes:
        """The bytes of the Herald record for a LogRecord, its message and its fields."""
        template = self._templates.get(_site(self.subject, record)) or self._template(record)
        if record.exc_info or record.exc_text or record.stack_info:
            text = _full_text(record, text, self.formatter)
        return template.pack(int(record.created * 1e9), text, fields)

    def _convert(
        self, record: _logging.LogRecord, text: str, fields: Optional[Dict[str, Any]]
    ) -> Record:
        """The Herald record that :meth:`_encode` packs."""
        template = self._templates.get(_site(self.subject, record)) or self._template(record)
        text = _full_text(record, text, self.formatter)
        return template.record(int(record.created * 1e9), text, fields)

    def _template(self, record: _logging.LogRecord) -> RecordTemplate:
        """Packs (and keeps) the subject, priority and origin of ``record``'s call site."""
        origin = Origin(
            host=HOST,
            process=_process(record),
            thread=record.threadName or "",
            file=record.pathname or "",
            line=record.lineno,
            routine=record.funcName or "",
        )
        subject = self.subject or _subject(record.name)
        template = RecordTemplate(Kind.LOG, subject, priority_for_level(record.levelno), origin)
        if len(self._templates) >= _CACHE_MAX:
            self._templates.clear()
        self._templates[_site(self.subject, record)] = template
        return template

    # ---- disk buffer -----------------------------------------------------------------------

    def _spooled_step(self, spool: Spool) -> bool:
        """What the background thread does with a disk buffer and a client: while no server
        answers, moves the memory buffer to disk; once one does, sends the disk's records
        first, a step at a time (moving the memory buffer's older half to disk meanwhile, so
        that it does not fill). True when the memory buffer may be sent now."""
        client = self._client
        assert client is not None
        if not client.connected:
            self._offline = True
            self._spill(len(self._buffer))
            self._report_losses()
            return False
        self._offline = False
        self._largest = client.max_record_bytes
        if spool.pending:
            if len(self._buffer) > self.capacity // 2:
                self._spill(len(self._buffer) - self.capacity // 4)
            replay_step(client, spool, self.flush_timeout, self._reject_spooled)
            self._report_losses()
            return not spool.pending
        self._report_losses()
        return True

    def _spill(self, count: int) -> None:
        """Moves the oldest ``count`` records of the memory buffer to the disk buffer."""
        spool = self._spool
        assert spool is not None
        buffer = self._buffer
        while count > 0 and buffer:
            n = min(count, len(buffer), self.batch)
            count -= n
            taken = [buffer.popleft() for _ in range(n)]
            if self._storms.on:
                taken = self._collapse(taken)
            spool.append(self._encode_all(taken))
        if self._storms.on and time.monotonic() - self._storm_tick >= _STORM_TICK:
            self._storm_tick = time.monotonic()
            self._send_summaries(self._storms.tick(self._storm_tick))

    def _encode_all(self, taken: List[_Entry]) -> List[Incoming]:
        """(priority, bytes) of each entry that can be sent; refuses the others."""
        encoded: List[Incoming] = []
        for record, text, fields in taken:
            try:
                data = self._encode(record, text, fields)
            except Exception as err:
                self._refuse(record, err)
                continue
            if len(data) > self._largest:
                subject = self.subject or _subject(record.name)
                self._refuse(record, RecordTooLargeError(len(data), self._largest, subject))
                continue
            encoded.append((int(priority_for_level(record.levelno)), data))
        return encoded

    def _reject_spooled(self, data: bytes) -> None:
        """Counts a record from disk larger than the server now takes."""
        self._unreported.count(_priority_of(data), REJECTED)

    def _report_losses(self, force: bool = False) -> None:
        """Reports the losses not yet reported (at most once per DROP_REPORT_INTERVAL unless
        ``force``): sent at once when a server answers and the disk holds nothing older,
        else put on disk after everything there, to go out in order; without a disk buffer,
        kept until a server answers."""
        spool = self._spool
        now = time.monotonic()
        if not force and now - self._last_report < DROP_REPORT_INTERVAL:
            return
        with self._drop_lock:
            by_level, self._drops_by_level = self._drops_by_level, {}
        for level, n in by_level.items():
            self._unreported.count(int(priority_for_level(level)), BUFFER_FULL, n)
        client = self._client
        direct = client is not None and client.connected and (spool is None or not spool.pending)
        if spool is not None:
            if not direct and spool.losses.total + self._unreported.total:
                # Room first, whatever it sheds, so that the report counts that too.
                spool.make_room(REPORT_RANK, _REPORT_ROOM_BYTES)
            self._unreported.add(spool.losses.take())
        if not self._unreported.total:
            return
        self._last_report = now
        counts = self._unreported.take()
        data = counts.report(self.subject or DROP_REPORT_SUBJECT).to_bytes()
        if direct:
            assert client is not None
            try:
                client.publish_encoded([data])
                return
            except (HeraldError, ValueError):
                pass
        if spool is None:
            self._unreported.add(counts)  # reported once a server answers
            return
        spool.append([(REPORT_RANK, data)])

    def _load_spool(self, spool: Spool) -> None:
        """Reads the disk buffer's segments; one that cannot be read turns the disk buffer
        off (said on stderr, as handleError does), and the handler goes on without it."""
        try:
            spool.load()
        except OSError as err:
            self._spool = None
            try:
                spool.close()
            except OSError:
                pass
            _say_logging_error(
                f"HeraldHandler cannot read its disk buffer `{spool.directory}` and goes on "
                f"without it: {err}"
            )

    def _close_spool(self, spool: Spool) -> None:
        """At the end: what is left in memory goes to disk, then what the client sent and
        no server acknowledged (older, so before it), and the losses not yet reported."""
        try:
            self._spill(len(self._buffer))
            if self._storms.on:
                self._send_summaries(self._storms.finish())
                self._spill(len(self._buffer))
            self._report_losses(force=True)
            client = self._client
            if client is not None and client.connected:
                try:
                    client.flush(min(self.flush_timeout, 1.0))
                except Exception:
                    pass
            if client is not None:
                spool.keep_unacknowledged(client.unacked_records())
        finally:
            spool.close()

    def _drop_client(self) -> None:
        """Lets go of a client that failed (its connection ended for good: failover never
        gives up otherwise). What it sent and no server acknowledged goes in front of the disk
        buffer; without one it is lost, and counted (``closed``)."""
        client, self._client = self._client, None
        if client is not None and self._spool is not None:
            self._spool.keep_unacknowledged(client.unacked_records())
        elif client is not None:
            lost = client.unacked_encoded()
            with self._drop_lock:
                self.dropped += len(lost)
            for data in lost:
                self._unreported.count(_priority_of(data), CLOSED)
        if client is not None:
            try:
                client.close(0.1)
            except Exception:
                pass
