"""Finding a server: the first of the URL that answers, and after a lost connection the next
ones, round after round with backoff, until one answers or the reconnect timeout passes; then
moving the connection there (``FailoverMixin``) and telling each subscription
(:class:`herald.subscription.Interrupted`).

Layering: this module builds on ``link``, ``outbox``, ``subscription`` and ``waiter``, and
``connection`` on it; none of those imports ``connection``."""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple, Union

from .dialer import Dialer
from .errors import ConnectError, ConnectionClosed
from .link import Link
from .outbox import Outbox
from .subscription import Interrupted, Subscription
from .waiter import Waiter
from .wire.frames import Frame, InfoReplyFrame, QueryReply, encode_frame

# First pause between rounds of attempts; it doubles up to the maximum (as in the Rust client).
FIRST_BACKOFF = 0.05
MAX_BACKOFF = 1.0

Address = Tuple[str, int]

_log = logging.getLogger("herald.client")


def first_link(servers: List[Address], dialer: Dialer, timeout: float) -> Tuple[int, Link]:
    """The first server of the list that completes the handshake, with its index; raises
    ConnectError naming why each one failed."""
    errors = []
    for index, address in enumerate(servers):
        try:
            return index, Link(address, dialer, timeout)
        except ConnectError as err:
            errors.append(str(err))
    raise ConnectError("; ".join(errors))


def reconnect(
    servers: List[Address],
    start: int,
    dialer: Dialer,
    connect_timeout: float,
    reconnect_timeout: float,
    stopping: threading.Event,
) -> Optional[Tuple[int, Link]]:
    """Tries the servers from index ``start`` on, around the list, pausing between rounds,
    until one answers (its index and link) or ``reconnect_timeout`` seconds pass or
    ``stopping`` is set (None)."""
    deadline = time.monotonic() + reconnect_timeout
    backoff = FIRST_BACKOFF
    while True:
        for offset in range(len(servers)):
            if stopping.is_set():
                return None
            index = (start + offset) % len(servers)
            remaining = deadline - time.monotonic()
            try:
                timeout = max(0.1, min(connect_timeout, remaining))
                return index, Link(servers[index], dialer, timeout)
            except ConnectError:
                continue
        # The last pause ends at the deadline, and one last round is tried then: a server
        # back just before it is found, and giving up takes the whole reconnect timeout.
        remaining = deadline - time.monotonic()
        if remaining <= 0 or stopping.wait(min(backoff, remaining)):
            return None
        backoff = min(backoff * 2, MAX_BACKOFF)


class FailoverMixin:
    """The failover of :class:`herald.connection.Connection`, run by its reader thread."""

    _servers: List[Address]
    _index: int
    _link: Link
    _dialer: Dialer
    _connect_timeout: float
    reconnect_timeout: float
    failovers: int
    _send_lock: threading.Lock
    _lock: threading.Condition
    _stopping: threading.Event
    _next_id: int
    _waiters: Dict[int, Waiter]
    _subscriptions: Dict[int, Subscription]
    _restore: Dict[int, Callable[[int], Frame]]
    _partial: Dict[int, Union[InfoReplyFrame, QueryReply]]
    _outbox: Outbox
    _down: Optional[str]
    _last_sent: float

    def _fail_over(self, link: Link, error: BaseException) -> bool:
        lost_at = time.monotonic()
        why = f"connection to {link.where} lost ({error}); failing over"
        _log.warning("%s", why)
        with self._lock:
            self._down = why
            # Acknowledgements of frames that will be resent are answered then; the rest fail.
            lost = [ident for ident in self._waiters if not self._outbox.is_unacked(ident)]
            waiters = [self._waiters.pop(ident) for ident in lost]
            # Parts of INFO answers from the lost server: their requests fail, nothing follows.
            self._partial.clear()
            self._lock.notify_all()
        for waiter in waiters:
            waiter.set(None, ConnectionClosed(why))
        link.close()
        found = reconnect(
            self._servers,
            (self._index + 1) % len(self._servers),
            self._dialer,
            self._connect_timeout,
            self.reconnect_timeout,
            self._stopping,
        )
        if found is None:
            return False
        self._resume(*found, lost=link.where, lost_at=lost_at)
        return True

    def _resume(self, index: int, link: Link, lost: str, lost_at: float) -> None:
        """Points the connection at its new link and sends, ahead of anything newer, the
        subscriptions and the PUBLISH frames the old server never acknowledged (as they were
        sent: same bytes, same record numbers). Then gives each subscription an
        :class:`Interrupted` notice, before anything the new server delivers (this runs on
        the reader thread, which reads the new link next)."""
        with self._send_lock:
            with self._lock:
                restore = []
                for make in self._restore.values():
                    # A fresh id nobody waits for: its answer is dropped.
                    restore.append(encode_frame(make(self._next_id)))
                    self._next_id += 1
                resend = self._outbox.unacked()
                self._outbox.set_max_frame_bytes(link.welcome.max_frame_bytes)
                self._link, self._index, self._down = link, index, None
                self.failovers += 1
                subs = list(self._subscriptions.values())
                self._lock.notify_all()
            try:
                link.sock.sendall(b"".join(restore + resend))
            except OSError:
                link.break_off()
            self._last_sent = time.monotonic()
        _log.warning(
            "herald connection resumed on %s: %d subscriptions made again, %d frames resent",
            link.where,
            len(restore),
            len(resend),
        )
        notice = Interrupted(lost=lost, resumed=link.where, down=time.monotonic() - lost_at)
        for sub in subs:
            sub._failed_over(notice)
