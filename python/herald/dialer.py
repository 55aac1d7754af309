"""How this client reaches a server: the name, token and producer id it says HELLO with, and
TLS or not. One :class:`Dialer`, made once at ``connect`` from the URL, serves the first
connection, the reconnects and the failovers alike: every HELLO of a client names the same
producer."""

from __future__ import annotations

import os
import socket
import ssl
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

from .errors import ConnectError
from .tls import TlsSocket, connect_tls

# What a link reads and writes: a plain TCP socket or TLS over one (the same methods).
Transport = Union[socket.socket, TlsSocket]


def new_producer_id() -> int:
    """A random non-zero 64-bit producer id (docs/protocol.md, Numbered records)."""
    return int.from_bytes(os.urandom(8), "big") or 1


@dataclass(frozen=True)
class Dialer:
    """``ssl_context`` None means plain TCP; otherwise every server is reached over TLS and its
    certificate checked against the host name (or address) of the URL. ``producer`` is the id
    HELLO carries, under which the client numbers its records (0: none, the key is left out)."""

    name: str
    token: str = field(default="", repr=False)
    ssl_context: Optional[ssl.SSLContext] = None
    producer: int = 0

    def open(self, address: Tuple[str, int], timeout: float) -> Transport:
        """A connected transport to ``address``, the TLS handshake done (each step within
        ``timeout`` seconds); raises ConnectError naming the server and why."""
        where = f"{address[0]}:{address[1]}"
        try:
            sock = socket.create_connection(address, timeout=timeout)
        except OSError as err:
            raise ConnectError(f"cannot connect to herald server {where}: {err}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is None:
            return sock
        return connect_tls(sock, self.ssl_context, address[0], where, timeout)
