"""TLS over a connected TCP socket, safe for one reading thread and one writing thread at once.

An ``ssl.SSLSocket`` is one OpenSSL ``SSL`` object, which two threads must not use at the same
time; the client reads its link on one thread and writes it on another. So the TLS state is an
``SSLObject`` over two memory BIOs (``SSLContext.wrap_bio``) and this module moves the bytes
between them and the plain socket itself:

- ``_tls_lock`` guards the ``SSLObject`` and both BIOs. It is held only for memory work, never
  while the socket blocks.
- ``_send_lock`` is held from draining the outgoing BIO until those bytes are on the wire, so
  TLS records reach the socket in the order OpenSSL made them. The reader never waits for it
  (see ``recv``).

A write never needs a read, except during a TLS 1.2 renegotiation, which the contexts herald
builds turn off (``OP_NO_RENEGOTIATION``; TLS 1.3 has none): should one come anyway, the
write fails with ``ssl.SSLWantReadError`` and the link counts as lost.

:class:`TlsSocket` has the socket methods the link and the connection use (``recv``,
``sendall``, ``settimeout``, ``gettimeout``, ``shutdown``, ``close``) with the same meaning: a
``recv`` timeout raises ``socket.timeout``, the end of the stream returns ``b""`` (whether the
server sent close_notify or just closed)."""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from typing import Optional

from .errors import ConnectError

# Plaintext handed to OpenSSL at a time by sendall: a few TLS records, drained and sent before
# the next, so a large frame is not held twice in memory.
_WRITE_CHUNK = 256 * 1024
_READ_BYTES = 256 * 1024
# What OpenSSL says when the bytes that came back are not TLS at all.
_NOT_TLS = {
    "WRONG_VERSION_NUMBER",
    "RECORD_LAYER_FAILURE",
    "UNKNOWN_PROTOCOL",
    "PACKET_LENGTH_TOO_LONG",
    "HTTP_REQUEST",
}
_PLAIN_HINT = "is the server serving TLS? a plain server is reached with herald://"


def tls_failure(where: str, error: BaseException) -> str:
    """The message of a ConnectError for a TLS handshake with ``where`` that failed."""
    message = f"TLS handshake with herald server {where} failed: {error}"
    reason = getattr(error, "reason", None)
    if isinstance(error, ssl.SSLEOFError) or reason in _NOT_TLS:
        message += f" ({_PLAIN_HINT})"
    return message


class TlsSocket:
    """A TLS client connection over the connected socket ``sock``; see the module's doc."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, server_hostname: str) -> None:
        self._sock = sock
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(
            self._incoming, self._outgoing, server_side=False, server_hostname=server_hostname
        )
        self._tls_lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._eof = False
        self._closing = False

    def handshake(self, timeout: float) -> None:
        """Completes the TLS handshake within ``timeout`` seconds; raises ``ssl.SSLError`` (the
        server's certificate refused, or an alert from the server), ``socket.timeout``, or
        ``ssl.SSLEOFError`` when the server closes the connection in the middle."""
        deadline = time.monotonic() + timeout
        while True:
            failed: Optional[ssl.SSLError] = None
            with self._tls_lock:
                try:
                    self._tls.do_handshake()
                    done = True
                except ssl.SSLWantReadError:
                    done = False
                except ssl.SSLError as err:
                    failed = err
                out = self._outgoing.read()
            if failed is not None:
                self._send_now(out)  # the alert telling the server why, if it goes at once
                raise failed
            if out:
                self._sock.settimeout(max(0.001, deadline - time.monotonic()))
                self._sock.sendall(out)
            if done:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout("timed out")  # as the socket's own timeouts say
            self._sock.settimeout(remaining)
            data = self._sock.recv(_READ_BYTES)
            if not data:
                raise ssl.SSLEOFError("the server closed the connection during the TLS handshake")
            with self._tls_lock:
                self._incoming.write(data)

    @property
    def version(self) -> Optional[str]:
        """The TLS version agreed on, such as ``TLSv1.3``."""
        with self._tls_lock:
            return self._tls.version()

    def recv(self, bufsize: int) -> bytes:
        """Up to ``bufsize`` bytes of plaintext; ``b""`` at the end of the stream."""
        while True:
            with self._tls_lock:
                data: Optional[bytes]
                try:
                    data = b"" if self._eof else self._tls.read(bufsize)
                except ssl.SSLWantReadError:
                    data = None
                except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                    data = b""  # close_notify, or the TCP stream ended without it
                if data == b"":
                    self._eof = True
                pending = self._outgoing.pending > 0
            if pending:
                # Reading made OpenSSL answer the server (an alert, the certificate a TLS 1.3
                # server asks for after the handshake; OpenSSL keeps the answer to a KeyUpdate
                # for the next write). The reader must not wait for the send lock: a writer
                # stuck in sendall until the server reads holds it, while the server may be
                # stuck writing to us until we read: neither would move again. So the answer
                # goes out now if nobody is sending, and otherwise with the writer's next
                # send, which drains the whole outgoing BIO in order; the client pings at
                # least every heartbeat (1 s), so it never waits long.
                self._try_flush()
            if data is not None:
                return data
            try:
                raw = self._sock.recv(_READ_BYTES)  # socket.timeout passes up, as on plain TCP
            except OSError:
                if self._closing:  # we shut it down; the server may answer with a reset
                    return b""
                raise
            with self._tls_lock:
                if raw:
                    self._incoming.write(raw)
                else:
                    self._incoming.write_eof()

    def sendall(self, data: bytes) -> None:
        """Encrypts ``data`` and sends it whole, with whatever TLS bytes wait to go out."""
        view = memoryview(data)
        with self._send_lock:
            while True:
                with self._tls_lock:
                    chunk, view = view[:_WRITE_CHUNK], view[_WRITE_CHUNK:]
                    while chunk:
                        chunk = chunk[self._tls.write(chunk) :]
                    out = self._outgoing.read()
                if out:
                    self._sock.sendall(out)
                if not view:
                    return

    def _try_flush(self) -> None:
        """Sends what waits in the outgoing BIO unless another thread is sending (which then
        sends it); an error is left for the next read or send to meet."""
        if not self._send_lock.acquire(blocking=False):
            return
        try:
            with self._tls_lock:
                out = self._outgoing.read()
            if out:
                self._sock.sendall(out)
        except OSError:
            pass
        finally:
            self._send_lock.release()

    def settimeout(self, timeout: Optional[float]) -> None:
        self._sock.settimeout(timeout)

    def gettimeout(self) -> Optional[float]:
        return self._sock.gettimeout()

    def shutdown(self, how: int) -> None:
        """Sends close_notify first (when nobody is sending and the socket takes it at once),
        then shuts the socket down, which wakes a thread blocked in ``recv``."""
        if how != socket.SHUT_RD and not self._closing:
            self._closing = True
            self._send_close_notify()
        self._sock.shutdown(how)

    def _send_close_notify(self) -> None:
        if not self._send_lock.acquire(blocking=False):
            return
        try:
            with self._tls_lock:
                try:
                    self._tls.unwrap()
                except ssl.SSLError:
                    pass  # SSLWantReadError: close_notify is out; the server's is not awaited
                out = self._outgoing.read()
            self._send_now(out)
        finally:
            self._send_lock.release()

    def _send_now(self, data: bytes) -> None:
        """Sends ``data`` (an alert, close_notify: a few bytes) if the socket takes it without
        waiting; errors are ignored."""
        try:
            if data and select.select([], [self._sock], [], 0)[1]:
                self._sock.send(data)
        except (OSError, ValueError):
            pass  # ValueError: the socket is closed already

    def close(self) -> None:
        self._sock.close()


def connect_tls(
    sock: socket.socket, context: ssl.SSLContext, host: str, where: str, timeout: float
) -> TlsSocket:
    """Shakes hands over the connected ``sock`` with server ``host`` (the name or address its
    certificate must hold) within ``timeout`` seconds. Raises ConnectError naming ``where`` and
    why, and closes ``sock``, when it fails."""
    tls = TlsSocket(sock, context, host)
    try:
        tls.handshake(timeout)
        sock.settimeout(timeout)  # for the HELLO and WELCOME that follow
    except ssl.SSLError as err:
        sock.close()
        raise ConnectError(tls_failure(where, err)) from None
    except OSError as err:
        sock.close()
        raise ConnectError(f"TLS handshake with herald server {where} failed: {err}") from None
    return tls
