"""Subscriptions: a queue of delivered records, iterable or drained by a callback thread."""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Union

from .errors import TimeoutError
from .wire.frames import Gap
from .wire.record import Record

_log = logging.getLogger("herald.client")

if TYPE_CHECKING:
    from .connection import Connection


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


_END = object()


class Subscription:
    """Records matching a filter. Iterate (``for d in sub``), call :meth:`next`, or pass a
    callback to :meth:`Client.subscribe`. ``lost`` counts records the server reported lost
    (GAP notices, kept in ``gaps``). ``undecodable`` counts records delivered that this client
    cannot decode (a newer server's field, an int outside i64 from an old archive): they are
    skipped, with a warning on the ``herald.client`` logger for the first. ``failovers``
    counts moves to another server: the subscription is made again there, but records routed
    while no server had it are not seen."""

    def __init__(
        self,
        connection: Connection,
        sid: int,
        callback: Optional[Callable[[Delivered], Any]] = None,
    ) -> None:
        self.id = sid
        self.lost = 0
        self.gaps: list[Gap] = []
        self.undecodable = 0
        self.failovers = 0
        self._connection = connection
        self._queue: queue.Queue[Union[Delivered, object]] = queue.Queue()
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

    def _gap(self, gap: Gap) -> None:
        self.lost += gap.count
        self.gaps.append(gap)

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

    def _failed_over(self, server: str) -> None:
        self.failovers += 1

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

    def next(self, timeout: Optional[float] = None) -> Optional[Delivered]:
        """The next record; None once the subscription has ended. Raises TimeoutError."""
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no record for subscription {self.id} within {timeout} s") from None
        if item is _END:
            self._queue.put(_END)
            return None
        assert isinstance(item, Delivered)
        return item

    def __iter__(self) -> Iterator[Delivered]:
        while True:
            item = self.next()
            if item is None:
                return
            yield item

    def pending(self) -> int:
        """Records delivered but not yet taken."""
        return self._queue.qsize()

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
