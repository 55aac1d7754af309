"""Throwaway certificates for the TLS tests, made with the ``openssl`` command: a CA, a server
certificate for 127.0.0.1 only, a client certificate, a second CA that signed neither, and the
client's key encrypted."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
# Python 3.13 checks strictly (VERIFY_X509_STRICT): key usages and key identifiers.
_LEAF = (
    "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
    "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
)


@dataclass
class Certs:
    dir: Path
    ca: Path
    other_ca: Path
    server: Path
    server_key: Path
    client: Path
    client_key: Path
    encrypted_key: Path  # client_key under the password "secret"


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def _ca(dir: Path, name: str) -> Path:
    _openssl(
        "req",
        "-x509",
        *_EC,
        "-keyout",
        str(dir / f"{name}-key.pem"),
        "-out",
        str(dir / f"{name}.pem"),
        "-days",
        "2",
        "-subj",
        f"/CN=herald test {name}",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    return dir / f"{name}.pem"


def _leaf(dir: Path, name: str, ca: Path, extensions: str) -> None:
    key, csr, ext = dir / f"{name}-key.pem", dir / f"{name}.csr", dir / f"{name}.ext"
    _openssl("req", *_EC, "-keyout", str(key), "-out", str(csr), "-subj", f"/CN={name}")
    ext.write_text(_LEAF + extensions)
    _openssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca),
        "-CAkey",
        str(ca.with_name(ca.stem + "-key.pem")),
        "-CAcreateserial",
        "-out",
        str(dir / f"{name}.pem"),
        "-days",
        "2",
        "-extfile",
        str(ext),
    )


def make_certs(dir: Path) -> Certs:
    """Writes the certificates into ``dir``; skips the test without the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip(
            "the TLS tests make their certificates with the `openssl` command, missing here"
        )
    ca = _ca(dir, "ca")
    other = _ca(dir, "other-ca")
    _leaf(dir, "server", ca, "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _leaf(dir, "client", ca, "extendedKeyUsage=clientAuth\n")
    encrypted = dir / "client-encrypted-key.pem"
    _openssl(
        "pkcs8",
        "-topk8",
        "-in",
        str(dir / "client-key.pem"),
        "-out",
        str(encrypted),
        "-passout",
        "pass:secret",
    )
    return Certs(
        dir=dir,
        ca=ca,
        other_ca=other,
        server=dir / "server.pem",
        server_key=dir / "server-key.pem",
        client=dir / "client.pem",
        client_key=dir / "client-key.pem",
        encrypted_key=encrypted,
    )
