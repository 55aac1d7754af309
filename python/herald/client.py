"""The synchronous client: ``herald.connect(url)`` → :class:`Client`."""

from __future__ import annotations

import itertools
import ssl
import threading
import time
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .archive import ArchiveMixin
from .connection import DEFAULT_RECONNECT_TIMEOUT, Connection
from .dialer import Dialer, new_producer_id
from .errors import ConnectionClosed, HeraldError
from .failover import first_link
from .info import InfoMixin
from .numbering import Numbering
from .origin import process_name, shared_local_origin
from .requests import RequestMixin, _Inbox
from .subscription import Delivered, Subscription
from .tls_context import tls_context
from .url import DEFAULT_URL, parse_url
from .wire.filter import KINDS_ALL, DeliveryOptions, Filter
from .wire.frames import Ack, AckLevel, Frame, Subscribe
from .wire.priority import Priority, PrioritySet, priority_set
from .wire.record import Kind, Record

Priorities = Union[None, str, Priority, PrioritySet, Iterable[Priority]]
_LEVELS = {"received": AckLevel.RECEIVED, "stored": AckLevel.STORED}


def _kinds(kinds: Union[None, Kind, str, Iterable[Union[Kind, str]]]) -> int:
    if kinds is None:
        return KINDS_ALL
    if isinstance(kinds, (Kind, str)):
        kinds = [kinds]
    bits = 0
    for kind in kinds:
        k = Kind[kind.upper()] if isinstance(kind, str) else Kind(kind)
        bits |= 1 << int(k)
    return bits


class Client(InfoMixin, ArchiveMixin, RequestMixin):
    """A connection to a Herald server. Publishing is batched; :meth:`flush` waits until the
    server has routed everything published before it."""

    def __init__(self, connection: Connection, url: str) -> None:
        self._conn = connection
        self.url = url
        self._sub_ids = itertools.count(1)
        self._inbox_lock = threading.Lock()
        self._inbox: Optional[_Inbox] = None

    @property
    def server(self) -> str:
        """The name the server gave in its WELCOME (it changes on failover)."""
        return self._conn.welcome.server

    @property
    def address(self) -> str:
        """``host:port`` of the server this client is connected to now."""
        host, port = self._conn.address
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    @property
    def failovers(self) -> int:
        """How many times the client moved to another server after losing one."""
        return self._conn.failovers

    @property
    def connection_id(self) -> int:
        return self._conn.welcome.connection

    @property
    def producer(self) -> int:
        """This client's producer id: a random non-zero 64-bit number chosen at
        :func:`connect`, sent in every HELLO (the same after a failover). The client numbers
        the records it publishes from 1 under it, so that servers can drop a record a
        failover sends again (docs/protocol.md, Numbered records). Read-only."""
        return self._conn.producer

    @property
    def abandoned(self) -> int:
        """Records this client held without an acknowledgement when its connection ended for
        good (failover gave up after ``reconnect_timeout``, the server refused it for good, or
        it was closed before they were acknowledged): records it cannot say reached a server
        (also logged as a warning on the ``herald.client`` logger). 0 while it runs."""
        return self._conn.abandoned

    @property
    def refused_records(self) -> int:
        """Published records the server refused as bad (``bad_record``) or because this
        client's identity may not publish them (``denied``): each PUBLISH frame's
        records less the count of its ACK. The good records of a batch are routed; why the
        others were refused is raised to a caller that waits (:meth:`flush`,
        :meth:`sync_send`) or else logged as a warning on the ``herald.client`` logger."""
        return self._conn.refused_records

    @property
    def archive_skipped(self) -> int:
        """Stored records left out of archive answers because they do not decode: by the
        server's archive (its answer says how many) or by this client. The rest of each
        answer is whole. (A subscription counts the deliveries it skips: ``undecodable``.)"""
        return self._conn.archive_skipped

    # ---- publishing ------------------------------------------------------------------------

    def publish(
        self,
        subject: str,
        type: str = "",
        text: str = "",
        fields: Optional[Mapping[str, Any]] = None,
        priority: Priority = Priority.INFO,
        kind: Kind = Kind.MESSAGE,
        audience: Sequence[str] = (),
    ) -> None:
        """Queues one record for the next batch. Raises ValueError (or TypeError) for a record
        that cannot be sent: IntRangeError for an int field outside -2^63..2^64-1,
        RecordTooLargeError for one larger than a PUBLISH frame holds."""
        self.publish_record(
            Record(
                kind=kind,
                subject=subject,
                time=time.time_ns(),
                type=type,
                priority=Priority(priority),
                audience=list(audience),
                text=text,
                fields=dict(fields or {}),
            )
        )

    def publish_record(self, record: Record) -> None:
        """Queues ``record`` for the next batch; raises as :meth:`publish`."""
        self._conn.add_record(record.to_bytes())

    def publish_encoded(self, records: List[bytes]) -> None:
        """Sends records already encoded (``Record.to_bytes()``) at once, after the open
        batch, in one PUBLISH frame of their own; does not wait for the ACK. For a publisher
        that batches itself (the logging handler). Records that do not fit one frame
        (:attr:`max_record_bytes` together) raise RecordTooLargeError (one record too large)
        or BatchTooLargeError (both are ValueErrors), and nothing is sent."""
        self._conn.send_batch(records)

    def publish_numbered(self, records: List[bytes], first_seq: int) -> None:
        """As :meth:`publish_encoded`, for records numbered already from ``first_seq`` on
        (one each, in order) by this client's :class:`~herald.numbering.Numbering`: records
        the disk buffer kept, sent again under their own numbers."""
        self._conn.send_batch(records, first_seq=first_seq)

    @property
    def connected(self) -> bool:
        """False while the connection is lost and the client fails over, or once closed."""
        return not self._conn.down

    def unacked_records(self) -> List[Tuple[int, bytes]]:
        """The records sent and not yet acknowledged, oldest first, as (number, encoded
        record): what a failover would send again."""
        return self._conn.unacked_records()

    def unacked_encoded(self) -> List[bytes]:
        """Every record sent and not yet acknowledged, numbered or not, oldest first: what
        is lost if the connection has ended for good."""
        return self._conn.unacked_encoded()

    @property
    def max_frame_bytes(self) -> int:
        """The largest frame the server accepts (from its WELCOME)."""
        return self._conn.welcome.max_frame_bytes

    @property
    def max_record_bytes(self) -> int:
        """The largest encoded record one PUBLISH frame holds: :attr:`max_frame_bytes` less
        the room kept for the frame's header. A larger record raises RecordTooLargeError."""
        return self._conn.max_record_bytes

    def log(self, priority: Priority, subject: str, text: str = "", **fields: Any) -> None:
        """Publishes a log record (kind log) with this host, process and thread as origin;
        raises as :meth:`publish`."""
        self.publish_record(
            Record(
                kind=Kind.LOG,
                subject=subject,
                time=time.time_ns(),
                priority=priority if type(priority) is Priority else Priority(priority),
                origin=shared_local_origin(),
                text=text,
                fields=fields,
            )
        )

    def sync_send(self, record: Record, level: str = "received", timeout: float = 10.0) -> Ack:
        """Sends ``record`` at once (after the open batch) and waits for its ACK at ``level``
        (``received`` or ``stored``). Raises ServerError with code ``archive`` when it cannot
        be stored, ``bad_record`` when the server refused it (:attr:`refused_records` counts
        it), TimeoutError without an answer; and as :meth:`publish` before sending."""
        try:
            ack_level = _LEVELS[level]
        except KeyError:
            raise ValueError(f"ack level `{level}` (expected received or stored)") from None
        sent = self._conn.send_batch([record.to_bytes()], ack_level, wait=True)
        assert sent is not None
        ack = self._conn.wait(sent, timeout, f"PUBLISH (ack {level})")
        assert isinstance(ack, Ack)
        return ack

    def flush(self, timeout: float = 10.0) -> None:
        """Sends the open batch and waits until the server has routed every record so far.
        Raises ServerError ``bad_record`` if the server refused records of that batch (the
        others were routed; :attr:`refused_records` counts them)."""
        sent = self._conn.send_batch(wait=True)
        assert sent is not None
        self._conn.wait(sent, timeout, "flush")

    # ---- subscribing -----------------------------------------------------------------------

    def subscribe(
        self,
        subject: str = "*",
        type: Optional[str] = None,
        priorities: Priorities = None,
        kinds: Union[None, Kind, str, Iterable[Union[Kind, str]]] = None,
        audience: Optional[Sequence[str]] = None,
        callback: Optional[Callable[[Delivered], Any]] = None,
        options: Optional[DeliveryOptions] = None,
        timeout: float = 10.0,
    ) -> Subscription:
        """Subscribes and waits for the server's OK. ``priorities`` takes a set such as
        ``">=WARNING"``, a Priority, a list of them or a PrioritySet."""
        filt = Filter(
            subject=subject,
            type=type or "*",
            priorities=priority_set(priorities),
            audience=list(audience or []),
            kinds=_kinds(kinds),
        )
        opts = options or DeliveryOptions()
        return self._subscribe_with(
            lambda cid, sid: Subscribe(cid, sid, filt, opts), "SUBSCRIBE", callback, timeout
        )

    def subscribe_and_get(
        self,
        subject: str = "*",
        timeout: float = 10.0,
        **filters: Any,
    ) -> Delivered:
        """Subscribes (with the filters of :meth:`subscribe`), waits at most ``timeout`` for
        one record, unsubscribes and returns it. Raises TimeoutError if none came."""
        with self.subscribe(subject, timeout=timeout, **filters) as sub:
            found = sub.next(timeout)
        if found is None:
            raise ConnectionClosed(f"the connection ended before a record on `{subject}` came")
        return found

    def _subscribe_with(
        self,
        frame_for: Callable[[int, int], Frame],
        what: str,
        callback: Optional[Callable[[Delivered], Any]],
        timeout: float,
    ) -> Subscription:
        sub_id = next(self._sub_ids)
        sub = Subscription(self._conn, sub_id, callback)
        return self._conn.subscribe(sub_id, sub, lambda cid: frame_for(cid, sub_id), what, timeout)

    # ---- the rest --------------------------------------------------------------------------

    def monitor(self, timeout: float = 10.0) -> Dict[str, Any]:
        """The server's monitor data (``clients``, ``records_in``, …)."""
        return self._conn.monitor(timeout)

    @property
    def closed(self) -> bool:
        return self._conn.closed

    def close(self, flush_timeout: float = 5.0) -> None:
        """Flushes what is queued (best effort) and closes the connection."""
        if not self._conn.closed:
            try:
                self.flush(flush_timeout)
            except HeraldError:
                pass
        self._conn.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(
    url: str = DEFAULT_URL,
    name: Optional[str] = None,
    timeout: float = 10.0,
    reconnect_timeout: float = DEFAULT_RECONNECT_TIMEOUT,
    *,
    ssl_context: Optional[ssl.SSLContext] = None,
    numbering: Optional[Numbering] = None,
) -> Client:
    """Connects to the first server of ``url`` that answers (``herald://h1:7400,h2:7400``,
    options ``?name=…&token=…``); raises ConnectError naming why each one failed.

    ``herald+tls://`` reaches the servers over TLS and checks each one's certificate against
    its host name (or address) in the URL: options ``ca=FILE`` (PEM CAs the certificate must
    chain to; the system's trust store without it) and, for mutual TLS, ``cert=FILE&key=FILE``
    (the client's PEM certificate chain and key). ``ssl_context`` is used instead of building
    one from these (it needs ``herald+tls://``, and a URL without ``ca``, ``cert``, ``key``).
    A file that cannot be used raises ConnectError naming it.

    When the connection is lost later the client fails over: it tries the next servers of
    the URL, round after round with backoff, for up to ``reconnect_timeout`` seconds (0 turns
    failover off), makes its subscriptions again and resends every record the lost server
    had not acknowledged. Requests waiting at that moment fail with ConnectionClosed. Each
    subscription is told with an :class:`herald.Interrupted` notice (see
    :meth:`Subscription.events`). The client says HELLO with a producer id of its own
    (:attr:`Client.producer`), the same on every server, and numbers its records.
    ``numbering`` gives the producer id and the numbers instead (the logging handler's disk
    buffer keeps them across restarts)."""
    parsed = parse_url(url)
    dialer = Dialer(
        name=name or parsed.name or process_name(),
        token=parsed.token or "",
        ssl_context=tls_context(parsed, ssl_context),
        producer=new_producer_id() if numbering is None else numbering.producer,
    )
    index, link = first_link(parsed.servers, dialer, timeout)
    conn = Connection(parsed.servers, index, link, dialer, timeout, reconnect_timeout, numbering)
    return Client(conn, url)
