"""Request/reply as in the Rust client: one inbox subscription per client
(``_INBOX.<unique>.*``); each request carries ``reply_to = _INBOX.<unique>.<id>`` and ``id``,
and the reply comes back on that subject with the same ``id``."""

from __future__ import annotations

import itertools
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional

from .errors import TimeoutError
from .subscription import Delivered, Subscription
from .wire.priority import Priority
from .wire.record import Kind, Record

if TYPE_CHECKING:
    from .connection import Connection


class _Inbox:
    def __init__(self) -> None:
        self.prefix = f"_INBOX.{os.getpid():x}{time.time_ns():x}"
        self.lock = threading.Lock()
        self.waiting: Dict[int, list[Any]] = {}
        self.ids = itertools.count(1)
        self.subscription: Optional[Subscription] = None

    def expect(self) -> tuple[int, str, threading.Event, list[Any]]:
        ident = next(self.ids)
        event = threading.Event()
        slot: list[Any] = [event]
        with self.lock:
            self.waiting[ident] = slot
        return ident, f"{self.prefix}.{ident}", event, slot

    def forget(self, ident: int) -> None:
        with self.lock:
            self.waiting.pop(ident, None)

    def deliver(self, delivered: Delivered) -> None:
        ident = delivered.record.id
        if ident is None:
            return
        with self.lock:
            slot = self.waiting.pop(ident, None)
        if slot is not None:
            slot.append(delivered)
            slot[0].set()


class RequestMixin:
    """The request/reply calls of :class:`herald.Client`."""

    _conn: Connection
    _inbox_lock: threading.Lock
    _inbox: Optional[_Inbox]

    def _get_inbox(self, timeout: float) -> _Inbox:
        with self._inbox_lock:
            if self._inbox is None:
                inbox = _Inbox()
                client: Any = self  # a Client
                inbox.subscription = client.subscribe(
                    f"{inbox.prefix}.*", callback=inbox.deliver, timeout=timeout
                )
                self._inbox = inbox
            return self._inbox

    def request(
        self,
        subject: str,
        text: str = "",
        fields: Optional[Mapping[str, Any]] = None,
        timeout: float = 10.0,
        type: str = "",
        priority: Priority = Priority.INFO,
    ) -> Delivered:
        """Publishes a request on ``subject`` and waits at most ``timeout`` s for the first
        reply; raises TimeoutError without one."""
        inbox = self._get_inbox(timeout)
        ident, reply_to, event, slot = inbox.expect()
        record = Record(
            kind=Kind.MESSAGE,
            subject=subject,
            time=time.time_ns(),
            type=type,
            priority=Priority(priority),
            text=text,
            fields=dict(fields or {}),
            reply_to=reply_to,
            id=ident,
        )
        try:
            self._conn.add_record(record.to_bytes())
            self._conn.send_batch(if_any=True)
        except BaseException:
            inbox.forget(ident)
            raise
        if not event.wait(timeout):
            inbox.forget(ident)
            raise TimeoutError(f"no reply to the request on `{subject}` within {timeout} s")
        reply = slot[1]
        assert isinstance(reply, Delivered)
        return reply

    def reply(
        self,
        to: Any,
        text: str = "",
        fields: Optional[Mapping[str, Any]] = None,
        type: str = "",
        priority: Priority = Priority.INFO,
    ) -> None:
        """Publishes a reply to the requester of ``to`` (a Record or Delivered): on its
        ``reply_to`` subject, with its ``id``."""
        request = to.record if isinstance(to, Delivered) else to
        if request.reply_to is None:
            raise ValueError(f"record on `{request.subject}` has no reply_to")
        self._conn.add_record(
            Record(
                kind=Kind.MESSAGE,
                subject=request.reply_to,
                time=time.time_ns(),
                type=type,
                priority=Priority(priority),
                text=text,
                fields=dict(fields or {}),
                id=request.id,
            ).to_bytes()
        )
