"""The client's errors; each message names the problem."""

from __future__ import annotations

import builtins
from typing import Optional


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
    """The server answered with ERROR (``code`` as in docs/protocol.md, Errors)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"server error {code}: {message}")
        self.code = code
        self.message = message


class RecordTooLargeError(HeraldError, ValueError):
    """A record too large for one PUBLISH frame under the server's ``max_frame_bytes``: it is
    refused at the call and never sent (the server would close the connection for it)."""

    def __init__(self, size: int, max: int, subject: Optional[str] = None) -> None:
        on = f" on `{subject}`" if subject is not None else ""
        super().__init__(
            f"record{on} of {size} bytes is larger than the {max} bytes a PUBLISH frame holds "
            f"(the server's max_frame_bytes less the frame header); it was not sent"
        )
        self.size = size
        self.max = max
        self.subject = subject


class BatchTooLargeError(HeraldError, ValueError):
    """Encoded records (``publish_encoded``) each small enough for a PUBLISH frame but too
    large together for one: they are refused at the call and none is sent."""

    def __init__(self, records: int, size: int, max: int) -> None:
        super().__init__(
            f"{records} records of {size} bytes do not fit one PUBLISH frame "
            f"({max} bytes under the server's limit); send fewer at once"
        )
        self.records = records
        self.size = size
        self.max = max


class RequestTooLargeError(HeraldError, ValueError):
    """A request (an INFO, SUBSCRIBE, QUERY, …) too large for one frame under the server's
    ``max_frame_bytes``, such as a ``get_infos`` of very many names: it is refused at the call
    and never sent (the server would close the connection for it)."""

    def __init__(self, frame: str, size: int, max: int) -> None:
        super().__init__(
            f"{frame} request of {size} bytes exceeds the server's maximum frame of {max} "
            f"bytes; it was not sent"
        )
        self.frame = frame
        self.size = size
        self.max = max


class SpoolLockedError(HeraldError):
    """A disk buffer directory that another producer (process) holds."""

    def __init__(self, directory: str, holder: str) -> None:
        super().__init__(
            f"disk buffer directory `{directory}` is in use by another producer ({holder}); "
            f"give each producer a directory of its own"
        )
        self.directory = directory
        self.holder = holder
