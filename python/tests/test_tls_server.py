"""The Python client over TLS against a real `herald serve` configured with the certificates
of `herald cert dev`: a round trip over ``herald+tls://``, mutual TLS with the client's
certificate (refused without it when the server requires one), and a server whose
certificate is from another CA refused, and a client certificate acting as the identity it
names."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Dict, Iterator

import pytest
from conftest import Server, herald_bin

import herald
from herald.errors import ConnectError, ServerError


def dev_certs(dir: Path) -> Path:
    subprocess.run([herald_bin(), "cert", "dev", str(dir), "--client", "py"], check=True)
    return dir


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return dev_certs(tmp_path_factory.mktemp("certs"))


def settings(certs: Path, client_certs: bool = False) -> Dict[str, str]:
    """The server's TLS settings; ``client_certs``: a client certificate is required."""
    chosen = {"tls_cert": str(certs / "server.pem"), "tls_key": str(certs / "server-key.pem")}
    if client_certs:
        chosen["tls_client_ca"] = str(certs / "ca.pem")
        chosen["tls_client_auth"] = "required"
    return chosen


@pytest.fixture
def tls_server(tmp_path: Path, certs: Path) -> Iterator[Server]:
    server = Server(tmp_path, settings=settings(certs))
    yield server
    server.stop()


def test_publish_and_subscribe_over_tls(tls_server: Server, certs: Path) -> None:
    url = f"herald+tls://{tls_server.address}?ca={certs / 'ca.pem'}&name=tls-py"
    with herald.connect(url) as client:
        sub = client.subscribe("tls.*")
        client.publish("tls.hello", text="over TLS")
        client.flush()
        got = sub.next(10)
        assert got is not None and got.text == "over TLS"
        assert "tls-py" in [c["name"] for c in client.monitor()["clients"]]


def test_mutual_tls(tmp_path: Path, certs: Path) -> None:
    server = Server(tmp_path, settings=settings(certs, client_certs=True))
    try:
        base = f"herald+tls://{server.address}?ca={certs / 'ca.pem'}"
        mine = f"cert={certs / 'client-py.pem'}&key={certs / 'client-py-key.pem'}"
        with herald.connect(f"{base}&{mine}") as client:
            client.monitor()
        with pytest.raises(ConnectError) as refused:
            herald.connect(base, timeout=5)
        assert f"TLS handshake with herald server {server.address} failed" in str(refused.value)
    finally:
        server.stop()


def test_a_server_from_another_ca_is_refused(
    tls_server: Server, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = dev_certs(tmp_path_factory.mktemp("other"))
    with pytest.raises(ConnectError) as refused:
        herald.connect(f"herald+tls://{tls_server.address}?ca={other / 'ca.pem'}", timeout=5)
    assert "CERTIFICATE_VERIFY_FAILED" in str(refused.value)


def test_a_client_certificate_acts_as_the_identity_it_names(tmp_path: Path, certs: Path) -> None:
    made = subprocess.run(
        [herald_bin(), "token", "new", "py", "--data-dir", str(tmp_path), "--publish", "tls.*"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert made.stdout.startswith("hrd_"), made
    chosen = settings(certs)
    chosen["tls_client_ca"] = str(certs / "ca.pem")
    server = Server(tmp_path, settings=chosen)
    try:
        base = f"herald+tls://{server.address}?ca={certs / 'ca.pem'}"
        mine = f"cert={certs / 'client-py.pem'}&key={certs / 'client-py-key.pem'}"
        with herald.connect(f"{base}&{mine}") as client:
            with pytest.raises(ServerError) as denied:
                client.monitor()
            assert denied.value.code == "denied" and "`py`" in str(denied.value)
        with pytest.raises(ConnectError) as refused:
            herald.connect(base, timeout=5)
        assert "needs a token" in str(refused.value)
    finally:
        server.stop()
