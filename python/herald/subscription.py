"""Subscriptions: a queue of delivered records and notices (gaps, failovers), iterable or
drained by a callback thread.

This module knows the connection only as something that can unsubscribe (:class:`Unsubscriber`):
the connection and its failover import it, never the other way round."""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Protocol, Union

from .errors import TimeoutError
from .wire.frames import Gap
from .wire.record import Record

_log = logging.getLogger("herald.client")


@dataclass
class Delivered:
    """One record as delivered: the server's sequence number and receive time (ns) with it."""

    seq: int
    received: int
    record: Record

    @property
    def subject(self) -> str:
        return self.record.subject

    @property
    def text(self) -> str:
        return self.record.text

    @property
    def fields(self) -> Any:
        return self.record.fields


@dataclass(frozen=True)
class Interrupted:
    """The notice of a failover, given to every subscription (the Rust client's
    ``Event::Interrupted``): the connection to server ``lost`` (``host:port``) failed, the
    client moved to ``resumed`` and made the subscription again there. Records published in
    between, while the subscription went unserved for about ``down`` seconds, were not
    delivered to it: a gap of unknown size. Each is kept in :attr:`Subscription.interruptions`
    and yielded, in order among the records, by :meth:`Subscription.events`."""

    lost: str
    resumed: str
    down: float


# What :meth:`Subscription.events` yields: a record, a GAP notice (records the server lost
# for this subscription: ``herald.frames.Gap``), or the notice of a failover.
Event = Union[Delivered, Gap, Interrupted]


class Unsubscriber(Protocol):
    """What a subscription needs of its connection."""

    def unsubscribe(self, sub_id: int, timeout: float) -> None: ...


_END = object()


class Subscription:
    """Records matching a filter. Iterate (``for d in sub``), call :meth:`next`, or pass a
    callback to :meth:`Client.subscribe`: these give records (:class:`Delivered`) only.

    Losses are kept on the subscription: ``lost`` counts records the server reported lost
    (GAP notices, kept in ``gaps``); ``failovers`` counts moves to another server, each kept
    as an :class:`Interrupted` notice in ``interruptions`` — the subscription is made again
    there, but records routed while no server had it are not seen. :meth:`events` (or
    :meth:`next_event`) yields the notices too, where they happened among the records:
    ``Delivered``, ``Gap`` and ``Interrupted`` items. ``undecodable`` counts records
    delivered that this client cannot decode (a newer server's field, an int outside i64
    from an old archive): they are skipped, with a warning on the ``herald.client`` logger
    for the first."""

    def __init__(
        self,
        connection: Unsubscriber,
        sid: int,
        callback: Optional[Callable[[Delivered], Any]] = None,
    ) -> None:
        self.id = sid
        self.lost = 0
        self.gaps: list[Gap] = []
        self.undecodable = 0
        self.failovers = 0
        self.interruptions: list[Interrupted] = []
        self._connection = connection
        self._queue: queue.Queue[Union[Event, object]] = queue.Queue()
        # Notices (gaps, interruptions) in the queue, which pending() does not count.
        self._notices = 0
        self._notices_lock = threading.Lock()
        self._closed = False
        self._thread: Optional[threading.Thread] = None
        if callback is not None:
            self._thread = threading.Thread(
                target=self._run_callback, args=(callback,), name=f"herald-sub-{sid}", daemon=True
            )
            self._thread.start()

    # Called by the connection's reader thread.
    def _deliver(self, delivered: Delivered) -> None:
        self._queue.put(delivered)

    def _notice(self, notice: Union[Gap, Interrupted]) -> None:
        with self._notices_lock:
            self._notices += 1
        self._queue.put(notice)

    def _gap(self, gap: Gap) -> None:
        self.lost += gap.count
        self.gaps.append(gap)
        self._notice(gap)

    def _undecodable(self, seq: int, reason: str) -> None:
        self.undecodable += 1
        if self.undecodable == 1:
            _log.warning(
                "subscription %d skipped the record of seq %d, which does not decode (%s); "
                "any more are counted in its `undecodable` without a word",
                self.id,
                seq,
                reason,
            )

    def _failed_over(self, notice: Interrupted) -> None:
        """Made again on the next server; before anything that server delivers."""
        self.failovers += 1
        self.interruptions.append(notice)
        self._notice(notice)

    def _end(self) -> None:
        self._closed = True
        self._queue.put(_END)

    def _run_callback(self, callback: Callable[[Delivered], Any]) -> None:
        for delivered in self:
            try:
                callback(delivered)
            except Exception:
                # One bad record must not end delivery (records would pile up unread).
                _log.exception("the callback of subscription %d failed", self.id)

    @property
    def closed(self) -> bool:
        return self._closed

    def _take(self, wait: Optional[float], timeout: Optional[float]) -> Optional[Event]:
        """The next item, waiting at most ``wait`` s; None at the end. Raises TimeoutError
        naming ``timeout``."""
        try:
            item = self._queue.get(timeout=wait)
        except queue.Empty:
            raise TimeoutError(f"no record for subscription {self.id} within {timeout} s") from None
        if item is _END:
            self._queue.put(_END)
            return None
        if not isinstance(item, Delivered):
            with self._notices_lock:
                self._notices -= 1
        assert isinstance(item, (Delivered, Gap, Interrupted))
        return item

    def next_event(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next record or notice (:class:`Delivered`, ``Gap`` or :class:`Interrupted`);
        None once the subscription has ended. Raises TimeoutError."""
        return self._take(timeout, timeout)

    def events(self) -> Iterator[Event]:
        """Every record and notice, in order, until the subscription ends: ``Delivered`` for a
        record, ``Gap`` when the server lost records for it, :class:`Interrupted` after a
        failover. (A notice taken here is still in ``gaps`` or ``interruptions``.)"""
        while True:
            item = self.next_event()
            if item is None:
                return
            yield item

    def next(self, timeout: Optional[float] = None) -> Optional[Delivered]:
        """The next record, passing over notices (see :meth:`events`); None once the
        subscription has ended. Raises TimeoutError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            item = self._take(wait, timeout)
            if item is None or isinstance(item, Delivered):
                return item

    def __iter__(self) -> Iterator[Delivered]:
        while True:
            item = self.next()
            if item is None:
                return
            yield item

    def pending(self) -> int:
        """Records delivered but not yet taken."""
        with self._notices_lock:
            return max(0, self._queue.qsize() - self._notices)

    def close(self, timeout: float = 5.0) -> None:
        """Unsubscribes (waiting for the server's OK) and ends iteration."""
        if self._closed:
            return
        self._closed = True
        try:
            self._connection.unsubscribe(self.id, timeout)
        finally:
            self._queue.put(_END)
            if self._thread is not None and self._thread is not threading.current_thread():
                self._thread.join(timeout)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_for(self, count: int, timeout: float) -> list[Delivered]:
        """Takes ``count`` records, failing with TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        out: list[Delivered] = []
        while len(out) < count:
            item = self.next(max(0.0, deadline - time.monotonic()))
            if item is None:
                break
            out.append(item)
        return out
