"""Small servers on 127.0.0.1 for the TLS tests, each connection on a thread of its own.
``TlsServer`` (Python's ``ssl`` on the server side) runs a behaviour per connection: ``echo``,
``fake_herald`` (HELLO → WELCOME, PING → PONG, PUBLISH → ACK) or any function of the TLS
socket. ``PlainServer`` answers whatever comes with a few bytes that are not TLS."""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path
from typing import Callable, List, Optional

from herald.wire.frames import Ack, FrameBuffer, Hello, Ping, Pong, Publish, Welcome, encode_frame

Behaviour = Callable[["TlsServer", ssl.SSLSocket], None]


def echo(server: TlsServer, conn: ssl.SSLSocket) -> None:
    """Sends back everything until the client ends; then a close_notify."""
    while True:
        data = conn.recv(65536)
        if not data:
            break
        conn.sendall(data)
    conn.unwrap()


def fake_herald(server: TlsServer, conn: ssl.SSLSocket) -> None:
    """Reads HELLO (its name is kept in ``server.hellos``), answers WELCOME, then answers PING
    and PUBLISH (with PONG and ACK) until the client ends; or, with
    ``server.drop_after_welcome``, closes after WELCOME."""
    frames = FrameBuffer()
    hello = None
    while True:
        frame = frames.next_frame()
        if frame is None:
            data = conn.recv(65536)
            if not data:
                return
            frames.feed(data)
        elif hello is None:
            assert isinstance(frame, Hello)
            hello = frame
            server.hellos.append(hello.name)
            welcome = Welcome(
                version=hello.version,
                server=server.name,
                heartbeat_ms=1000,
                max_frame_bytes=1 << 20,
                connection=len(server.hellos),
            )
            conn.sendall(encode_frame(welcome))
            if server.drop_after_welcome:
                return
        elif isinstance(frame, Ping):
            conn.sendall(encode_frame(Pong()))
        elif isinstance(frame, Publish):
            conn.sendall(encode_frame(Ack(frame.ack_id, frame.ack, len(frame.records))))


class _Listener:
    """A loopback listener on a free port; each accepted connection goes to ``_serve`` on a
    thread of its own until ``stop``."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return  # stopped
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self.listener.close()


class TlsServer(_Listener):
    """``client_ca`` makes the server require a client certificate signed by it; ``errors``
    keeps why handshakes failed."""

    def __init__(
        self,
        cert: Path,
        key: Path,
        behaviour: Behaviour = echo,
        client_ca: Optional[Path] = None,
        name: str = "fake",
    ) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        if client_ca is not None:
            self.context.verify_mode = ssl.CERT_REQUIRED
            self.context.load_verify_locations(cafile=client_ca)
        self.behaviour = behaviour
        self.name = name
        self.hellos: List[str] = []
        self.errors: List[str] = []
        self.drop_after_welcome = False
        super().__init__()

    def _serve(self, raw: socket.socket) -> None:
        raw.settimeout(30)
        conn = self.context.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
        try:
            try:
                conn.do_handshake()
            except (ssl.SSLError, OSError) as err:
                self.errors.append(str(err))
                _linger(conn)
                return
            self.behaviour(self, conn)
        except OSError:
            pass
        finally:
            conn.close()


def _linger(conn: socket.socket) -> None:
    """Ends a connection without a reset: the client reads the alert before the end."""
    try:
        conn.shutdown(socket.SHUT_WR)
        while conn.recv(65536):
            pass
    except OSError:
        pass


class PlainServer(_Listener):
    """A TCP server that answers the first bytes it gets with an ERROR-looking frame, not
    TLS, and closes."""

    def _serve(self, raw: socket.socket) -> None:
        with raw:
            raw.recv(65536)
            raw.sendall(b"\x00\x00\x00\x20\x07not TLS, a plain herald server....")
            _linger(raw)
