"""``herald+tls://`` URLs: parsing, the messages of bad ones, and the SSL context built from
their ``ca``, ``cert`` and ``key`` (files that cannot be used are named)."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from tls_certs import Certs, make_certs

import herald
from herald.errors import ConnectError, UrlError
from herald.tls_context import tls_context


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def test_tls_urls_parse() -> None:
    url = herald.parse_url("herald+tls://h1:7401,[::1]?name=n&token=t&ca=/ca.pem&cert=c&key=k")
    assert url.servers == [("h1", 7401), ("::1", 7400)]
    assert url.tls
    assert (url.name, url.token, url.ca, url.cert, url.key) == ("n", "t", "/ca.pem", "c", "k")
    assert str(url) == "herald+tls://h1:7401,[::1]:7400"  # no options: no token in logs


def test_plain_urls_stay_plain() -> None:
    for text in ("herald://h", "h:1"):
        url = herald.parse_url(text)
        assert not url.tls and url.ca is url.cert is url.key is None
        assert str(url).startswith("herald://")


@pytest.mark.parametrize(
    "url, message",
    [
        ("https://h", "scheme `https` is not herald:// or herald+tls://"),
        ("herald+ssl://h", "scheme `herald+ssl` is not herald:// or herald+tls://"),
        ("herald://h?ca=ca.pem", "`ca` needs herald+tls://"),
        ("h?cert=c&key=k", "`cert` needs herald+tls://"),
        ("herald+tls://h?cert=c.pem", "`cert` without `key`"),
        ("herald+tls://h?key=k.pem", "`key` without `cert`"),
        ("herald+tls://h?colour=blue", "unknown option `colour` (expected name, token, ca, "),
        ("herald+tls://", "no server named"),
    ],
)
def test_bad_tls_urls(url: str, message: str) -> None:
    with pytest.raises(UrlError) as caught:
        herald.parse_url(url)
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"bad server URL `{url}`: ")


def test_the_context_checks_the_server_against_the_ca(certs: Certs) -> None:
    assert tls_context(herald.parse_url("herald://h")) is None
    context = tls_context(herald.parse_url(f"herald+tls://h?ca={certs.ca}"))
    assert context is not None
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert [c["subject"] for c in context.get_ca_certs()] == [
        ((("commonName", "herald test ca"),),)
    ]
    default = tls_context(herald.parse_url("herald+tls://h"))
    assert default is not None and default.check_hostname  # the system's trust store


def test_a_given_context_needs_tls_and_no_files(certs: Certs) -> None:
    mine = ssl.create_default_context()
    assert tls_context(herald.parse_url("herald+tls://h"), mine) is mine
    with pytest.raises(UrlError, match="ssl_context needs a herald\\+tls:// URL"):
        tls_context(herald.parse_url("herald://h"), mine)
    with pytest.raises(UrlError, match="give one or the other"):
        tls_context(herald.parse_url(f"herald+tls://h?ca={certs.ca}"), mine)
    with pytest.raises(UrlError, match="ssl_context needs"):
        herald.connect("herald://127.0.0.1:1", ssl_context=mine)


def test_files_that_cannot_be_used_are_named(certs: Certs, tmp_path: Path) -> None:
    missing = tmp_path / "missing.pem"
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello\n")
    cases = [
        (f"ca={missing}", f"cannot use TLS CA file `{missing}`: [Errno 2]"),
        (f"ca={not_pem}", f"cannot use TLS CA file `{not_pem}`: "),
        (f"cert={missing}&key={certs.client_key}", f"client certificate `{missing}`"),
        (f"cert={certs.client}&key={not_pem}", f"and key `{not_pem}`: "),
        (f"cert={certs.client}&key={certs.server_key}", "KEY_VALUES_MISMATCH"),
        (f"cert={certs.client}&key={certs.encrypted_key}", "is encrypted"),
    ]
    for options, message in cases:
        with pytest.raises(ConnectError) as caught:
            herald.connect(f"herald+tls://127.0.0.1:1?{options}")
        assert message in str(caught.value), options
