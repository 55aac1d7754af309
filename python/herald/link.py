"""One link to one server: connect (over TLS if the dialer says so), shake hands (HELLO →
WELCOME), read frames."""

from __future__ import annotations

import socket
import ssl
from typing import Tuple

from .dialer import Dialer
from .errors import ConnectError, ConnectionClosed
from .tls import tls_failure
from .wire.frames import Error, Frame, FrameBuffer, Hello, Welcome, encode_frame
from .wire.msgpack_codec import DecodeError


class Link:
    """A connection that has completed the handshake, with the server's WELCOME. ``sock`` is
    a plain socket or a :class:`herald.tls.TlsSocket`; both read and write the same way."""

    def __init__(self, address: Tuple[str, int], dialer: Dialer, timeout: float) -> None:
        self.address = address
        self.where = f"{address[0]}:{address[1]}"
        self.sock = dialer.open(address, timeout)
        self._buffer = FrameBuffer()
        try:
            hello = Hello(name=dialer.name, token=dialer.token, producer=dialer.producer)
            self.sock.sendall(encode_frame(hello))
            first = self.read_frame()
        except ssl.SSLError as err:
            # TLS 1.3 ends the client's handshake before the server has checked the client's
            # certificate: a refusal of it (or of none) is an alert read here.
            self.sock.close()
            raise ConnectError(tls_failure(self.where, err)) from None
        except (OSError, DecodeError, ConnectionClosed) as err:
            self.sock.close()
            raise ConnectError(f"handshake with herald server {self.where} failed: {err}") from None
        if isinstance(first, Error):
            self.sock.close()
            raise ConnectError(f"herald server {self.where} refused: {first.code}: {first.message}")
        if not isinstance(first, Welcome):
            self.sock.close()
            raise ConnectError(
                f"herald server {self.where} sent {type(first).__name__}, not WELCOME"
            )
        self.welcome = first
        self._buffer.max_frame_bytes = first.max_frame_bytes + 1024
        self.heartbeat = max(first.heartbeat_ms, 1) / 1000.0
        # Silence for three heartbeats (at least 5 s) means the server is gone.
        self.sock.settimeout(max(5.0, 3 * self.heartbeat))

    def read_frame(self) -> Frame:
        """The next frame; raises ConnectionClosed at the end of the stream."""
        while True:
            frame = self._buffer.next_frame()
            if frame is not None:
                return frame
            data = self.sock.recv(256 * 1024)
            if not data:
                raise ConnectionClosed(f"herald server {self.where} closed the connection")
            self._buffer.feed(data)

    def break_off(self) -> None:
        """Shuts the socket down so that a blocked reader wakes up."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        self.break_off()
        self.sock.close()
