"""The TLS layer (``herald.tls``) against small Python and ``openssl s_server`` servers, no
herald server needed: megabytes each way at once on two threads, the socket's end and timeout
semantics, certificate checks (CA, host name, client certificate), a plain server named as
such, bytes OpenSSL makes while reading sent in order; and ``herald.connect`` over TLS,
failover included, against a fake herald server."""

from __future__ import annotations

import os
import random
import socket
import ssl
import subprocess
import threading
import time
from typing import Iterator, List

import pytest
from conftest import Server, wait_until
from tls_certs import Certs, make_certs
from tls_servers import PlainServer, TlsServer, fake_herald

import herald
from herald.dialer import Dialer
from herald.errors import ConnectError
from herald.tls import TlsSocket


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def echo_server(certs: Certs) -> Iterator[TlsServer]:
    server = TlsServer(certs.server, certs.server_key)
    yield server
    server.stop()


def context(certs: Certs, mutual: bool = False) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    if mutual:
        ctx.load_cert_chain(certs.client, certs.client_key)
    return ctx


def open_tls(ctx: ssl.SSLContext, port: int, host: str = "127.0.0.1") -> TlsSocket:
    sock = Dialer("test", ssl_context=ctx).open((host, port), 5.0)
    assert isinstance(sock, TlsSocket)
    return sock


def test_megabytes_both_ways_at_once(certs: Certs, echo_server: TlsServer) -> None:
    tls = open_tls(context(certs), echo_server.port)
    assert tls.version == "TLSv1.3"
    tls.settimeout(20)
    data = os.urandom(6 << 20)
    got = bytearray()

    def read() -> None:
        while len(got) < len(data):
            chunk = tls.recv(1 << 20)
            assert chunk
            got.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    sizes = random.Random(7)
    at = 0
    while at < len(data):  # frames of all sizes, some larger than the 256 KiB written at once
        size = sizes.choice([1, 17, 4096, 65536, 300_000, 1 << 20])
        tls.sendall(data[at : at + size])
        at += size
    reader.join(30)
    assert not reader.is_alive()
    assert bytes(got) == data
    tls.close()


def test_end_of_stream_and_timeouts_as_on_a_plain_socket(certs: Certs) -> None:
    def answer_then_close(server: TlsServer, conn: ssl.SSLSocket) -> None:
        request = conn.recv(100)
        if request == b"silence":
            conn.recv(100)  # answers nothing until the client ends
        elif request == b"close_notify":
            conn.sendall(b"bye")
            conn.unwrap()
        else:
            conn.sendall(b"bye")  # then the TCP stream ends without close_notify

    server = TlsServer(certs.server, certs.server_key, answer_then_close)
    try:
        for ending in (b"close_notify", b"ragged"):
            tls = open_tls(context(certs), server.port)
            tls.settimeout(5)
            tls.sendall(ending)
            assert tls.recv(100) == b"bye"
            assert tls.recv(100) == b""
            assert tls.recv(100) == b""
            tls.close()
        tls = open_tls(context(certs), server.port)
        tls.sendall(b"silence")
        tls.settimeout(0.2)
        assert tls.gettimeout() == 0.2
        with pytest.raises(socket.timeout):
            tls.recv(100)
        tls.close()
    finally:
        server.stop()


def test_shutdown_wakes_a_blocked_reader(certs: Certs, echo_server: TlsServer) -> None:
    tls = open_tls(context(certs), echo_server.port)
    tls.settimeout(10)
    ended: List[object] = []

    def read() -> None:
        try:
            ended.append(tls.recv(100))
        except OSError as err:
            ended.append(err)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.2)
    tls.shutdown(socket.SHUT_RDWR)
    reader.join(5)
    assert ended == [b""]
    tls.close()


def test_a_certificate_from_another_ca_is_refused(certs: Certs, echo_server: TlsServer) -> None:
    other = ssl.create_default_context(cafile=str(certs.other_ca))
    with pytest.raises(ConnectError) as caught:
        open_tls(other, echo_server.port)
    message = str(caught.value)
    assert message.startswith(f"TLS handshake with herald server {echo_server.address} failed: ")
    assert "CERTIFICATE_VERIFY_FAILED" in message
    assert "is the server serving TLS?" not in message
    wait_until(lambda: bool(echo_server.errors), 5, "the server seeing the refusal")
    assert "unknown ca" in echo_server.errors[0].lower()


def test_the_certificate_must_name_the_host_of_the_url(
    certs: Certs, echo_server: TlsServer
) -> None:
    # The server's certificate is for 127.0.0.1 alone.
    with pytest.raises(ConnectError) as caught:
        open_tls(context(certs), echo_server.port, host="localhost")
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    assert "localhost" in str(caught.value)


def test_mutual_tls(certs: Certs) -> None:
    server = TlsServer(certs.server, certs.server_key, fake_herald, client_ca=certs.ca)
    try:
        base = f"herald+tls://{server.address}?ca={certs.ca}&name=mutual"
        with herald.connect(f"{base}&cert={certs.client}&key={certs.client_key}") as client:
            assert client.server == "fake"
        assert server.hellos == ["mutual"]
        with pytest.raises(ConnectError) as caught:
            herald.connect(base, timeout=5)
        message = str(caught.value)
        assert message.startswith(f"TLS handshake with herald server {server.address} failed:")
        assert "CERTIFICATE_REQUIRED" in message
        assert server.hellos == ["mutual"]
    finally:
        server.stop()


def test_a_plain_server_gets_a_hint(certs: Certs) -> None:
    plain = PlainServer()
    try:
        with pytest.raises(ConnectError) as caught:
            herald.connect(f"herald+tls://{plain.address}?ca={certs.ca}", timeout=5)
        message = str(caught.value)
        assert message.startswith(f"TLS handshake with herald server {plain.address} failed: ")
        assert "WRONG_VERSION_NUMBER" in message
        assert message.endswith(
            "(is the server serving TLS? a plain server is reached with herald://)"
        )
    finally:
        plain.stop()


def test_a_plain_herald_server_gets_the_hint(server: Server) -> None:
    with pytest.raises(ConnectError) as caught:
        herald.connect(f"herald+tls://{server.address}", timeout=5)
    assert "a plain server is reached with herald://" in str(caught.value)


def test_a_silent_server_times_out_in_the_handshake(certs: Certs) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # connects, never answers
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(ConnectError) as caught:
            herald.connect(f"herald+tls://{address}?ca={certs.ca}", timeout=0.5)
        assert time.monotonic() - started < 3
    assert str(caught.value) == f"TLS handshake with herald server {address} failed: timed out"


def test_connect_and_fail_over_over_tls(certs: Certs) -> None:
    first = TlsServer(certs.server, certs.server_key, fake_herald, name="first")
    second = TlsServer(certs.server, certs.server_key, fake_herald, name="second")
    try:
        first.drop_after_welcome = True  # the first connection is lost at once
        url = f"herald+tls://{first.address},{second.address}?ca={certs.ca}&token=secret"
        with herald.connect(url, name="mover") as client:
            wait_until(lambda: client.failovers == 1, 10, "failover to the second server")
            assert client.server == "second"
            assert client.address == second.address
        assert first.hellos == ["mover"] and second.hellos == ["mover"]
    finally:
        first.stop()
        second.stop()


def test_an_ssl_context_given_to_connect(certs: Certs) -> None:
    server = TlsServer(certs.server, certs.server_key, fake_herald, client_ca=certs.ca)
    try:
        mine = context(certs, mutual=True)
        with herald.connect(f"herald+tls://{server.address}", ssl_context=mine) as client:
            assert client.server == "fake"
    finally:
        server.stop()


class SServer:
    """``openssl s_server`` in TLS 1.3 asking for a client certificate, driven by its stdin:
    ``c`` makes it ask again after the handshake (post-handshake authentication), ``K`` makes
    it update its keys and ask the client to update too; other lines are sent as data."""

    def __init__(self, certs: Certs) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.proc = subprocess.Popen(
            ["openssl", "s_server", "-accept", f"127.0.0.1:{self.port}", "-tls1_3", "-cert",
             str(certs.server), "-key", str(certs.server_key), "-verify", "1", "-CAfile",
             str(certs.ca)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        self.lines: List[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        wait_until(lambda: "ACCEPT\n" in self.lines, 10, "openssl s_server listening")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def type(self, line: str) -> None:
        """Sends ``line``. s_server takes what one read of its stdin gives as one command or
        line, so a command gets time to be read alone."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        if line in ("c", "K"):
            time.sleep(0.5)

    def verified(self) -> int:
        """How many times it has checked the client's certificate."""
        return sum(line.startswith("depth=0 CN = client") for line in self.lines)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(5)


@pytest.fixture
def s_server(certs: Certs) -> Iterator[SServer]:
    server = SServer(certs)
    yield server
    server.stop()


def test_what_reading_makes_openssl_send_goes_out_in_order(certs: Certs, s_server: SServer) -> None:
    ctx = context(certs, mutual=True)
    ctx.post_handshake_auth = True
    tls = open_tls(ctx, s_server.port)
    tls.settimeout(10)
    tls.sendall(b"hello\n")
    wait_until(lambda: "hello\n" in s_server.lines, 5, "s_server reading")
    assert s_server.verified() == 1
    # The server asks for the certificate again: reading makes the answer; nobody is sending,
    # so the reader sends it itself.
    s_server.type("c")
    s_server.type("one")
    assert tls.recv(100) == b"one\n"
    wait_until(lambda: s_server.verified() == 2, 5, "the answer read by s_server")
    # Again while a writer holds the send lock: the reader does not wait for it and leaves
    # the answer, which the writer's next send puts ahead of its data.
    with tls._send_lock:
        s_server.type("c")
        s_server.type("two")
        assert tls.recv(100) == b"two\n"
        assert tls._outgoing.pending > 0
    assert s_server.verified() == 2
    tls.sendall(b"after\n")
    wait_until(lambda: "after\n" in s_server.lines, 5, "s_server reading after the answer")
    assert s_server.verified() == 3
    # A key update asked for by the server: ours goes out with our next data.
    s_server.type("K")
    s_server.type("three")
    assert tls.recv(100) == b"three\n"
    tls.sendall(b"updated\n")
    wait_until(lambda: "updated\n" in s_server.lines, 5, "s_server reading with new keys")
    tls.close()
