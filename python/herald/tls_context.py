"""The ``ssl.SSLContext`` a ``herald+tls://`` URL asks for, built once at ``connect``."""

from __future__ import annotations

import ssl
from typing import Callable, Optional, TypeVar

from .errors import ConnectError, UrlError
from .url import ServerUrl

T = TypeVar("T")


def tls_context(url: ServerUrl, given: Optional[ssl.SSLContext] = None) -> Optional[ssl.SSLContext]:
    """None for a plain ``herald://`` URL. Otherwise ``given`` if there is one, or a context
    that checks the server's certificate and host name against the URL's ``ca`` (the system's
    trust store without it) and presents the URL's ``cert`` and ``key``. Raises UrlError for
    ``given`` with a plain URL or with ``ca``/``cert``/``key``, and ConnectError naming a file
    that cannot be read or is not what it should be."""
    if given is not None:
        if not url.tls:
            raise UrlError("ssl_context needs a herald+tls:// URL")
        if url.ca is not None or url.cert is not None:
            raise UrlError("ssl_context replaces the URL's ca, cert and key: give one or the other")
        return given
    if not url.tls:
        return None
    # With a CA file, only its CAs are trusted (not the system's as well).
    trusted = f"CA file `{url.ca}`" if url.ca is not None else "system trust store"
    context = _load(trusted, lambda: ssl.create_default_context(cafile=url.ca))
    # TLS 1.2 renegotiation would make a write wait for a read (see tls.py); servers have no use
    # for it (TLS 1.3 has none).
    context.options |= ssl.OP_NO_RENEGOTIATION
    if url.cert is not None and url.key is not None:
        cert, key = url.cert, url.key
        _load(
            f"client certificate `{cert}` and key `{key}`",
            lambda: context.load_cert_chain(cert, key, password=_no_password(key)),
        )
    return context


def _load(what: str, load: Callable[[], T]) -> T:
    try:
        return load()
    except ConnectError:
        raise  # an encrypted key (_no_password)
    except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
        raise ConnectError(f"cannot use TLS {what}: {err}") from None


def _no_password(key: str) -> Callable[[], str]:
    """Refuses an encrypted key at once (OpenSSL would ask for its password on the terminal)."""

    def refuse() -> str:
        raise ConnectError(f"TLS key `{key}` is encrypted; herald needs it unencrypted")

    return refuse
