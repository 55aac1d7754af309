"""The client's errors; each message names the problem."""

from __future__ import annotations

import builtins


class HeraldError(Exception):
    """Base class of every error the client raises."""


class ConnectError(HeraldError, ConnectionError):
    """No connection to any server of the URL (refused, unreachable, handshake failed)."""


class ConnectionClosed(HeraldError, ConnectionError):
    """The connection ended while a request was waiting or a call was made."""


class TimeoutError(HeraldError, builtins.TimeoutError):
    """A request got no answer in time."""


class UrlError(HeraldError, ValueError):
    """A server URL that cannot be parsed."""


class ServerError(HeraldError):
    """The server answered with ERROR."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"server error {code}: {message}")
        self.code = code
        self.message = message
