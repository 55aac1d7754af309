"""Server URLs, as the Rust client reads them::

    herald://host:port[,host2:port2…][?name=N&token=T]
    herald+tls://host:port[,host2:port2…][?name=N&token=T&ca=FILE&cert=FILE&key=FILE]

``herald+tls`` reaches every server of the URL over TLS, checking its certificate against the
host name (or IP address) written in the URL; ``ca`` is a PEM file of the CAs it must chain to
(the system's trust store without it); ``cert`` and ``key`` are the client's certificate chain
and private key (PEM) for mutual TLS. Option values are taken as written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from .errors import UrlError

DEFAULT_PORT = 7400
DEFAULT_URL = "herald://127.0.0.1:7400"
_TLS_OPTIONS = ("ca", "cert", "key")


@dataclass
class ServerUrl:
    servers: List[Tuple[str, int]] = field(default_factory=list)
    name: Optional[str] = None
    token: Optional[str] = None
    tls: bool = False
    ca: Optional[str] = None
    cert: Optional[str] = None
    key: Optional[str] = None

    def __str__(self) -> str:
        """The scheme and servers, never the options (a token must not reach a log)."""
        hosts = [f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.servers]
        return ("herald+tls://" if self.tls else "herald://") + ",".join(hosts)


def parse_url(url: str) -> ServerUrl:
    def bad(reason: str) -> UrlError:
        return UrlError(f"bad server URL `{url}`: {reason}")

    rest = url
    tls = False
    if "://" in url:
        scheme, rest = url.split("://", 1)
        if scheme not in ("herald", "herald+tls"):
            raise bad(f"scheme `{scheme}` is not herald:// or herald+tls://")
        tls = scheme == "herald+tls"
    hosts, _, query = rest.partition("?")
    hosts = hosts.rstrip("/")
    if not hosts:
        raise bad("no server named (expected herald://host:port)")
    parsed = ServerUrl(tls=tls)
    for host in hosts.split(","):
        try:
            parsed.servers.append(_parse_host(host))
        except ValueError as err:
            raise bad(str(err)) from None
    for pair in filter(None, query.split("&")):
        key, _, value = pair.partition("=")
        if key == "name":
            parsed.name = value
        elif key == "token":
            parsed.token = value
        elif key in _TLS_OPTIONS:
            if not tls:
                raise bad(f"`{key}` needs herald+tls://")
            setattr(parsed, key, value)
        else:
            raise bad(f"unknown option `{key}` (expected name, token, ca, cert or key)")
    if (parsed.cert is None) != (parsed.key is None):
        given, missing = ("cert", "key") if parsed.key is None else ("key", "cert")
        raise bad(f"`{given}` without `{missing}` (mutual TLS needs both)")
    return parsed


def _parse_host(host: str) -> Tuple[str, int]:
    if not host:
        raise ValueError("empty server between commas")
    port: Optional[str]
    if host.startswith("[") and "]" in host:
        close = host.index("]")
        name, rest = host[1:close], host[close + 1 :]
        if rest.startswith(":"):
            port = rest[1:]
        elif not rest:
            port = None
        else:
            raise ValueError(f"unexpected `{rest}` after `{host[: close + 1]}`")
    elif host.count(":") > 1:
        raise ValueError(f"IPv6 address `{host}` needs brackets, as in [::1]:7400")
    else:
        name, sep, port_text = host.partition(":")
        port = port_text if sep else None
    if not name:
        raise ValueError(f"server `{host}` has no host name")
    if port is None:
        return name, DEFAULT_PORT
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"bad port `{port}` in `{host}`")
    return name, int(port)
