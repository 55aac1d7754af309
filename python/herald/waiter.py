"""The answer to one request, waited for by the caller and set by the reader thread."""

from __future__ import annotations

import threading
from typing import Any, Optional

from .errors import TimeoutError


class Waiter:
    """One request's answer, set by the reader thread."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseException] = None

    def set(self, result: Any = None, error: Optional[BaseException] = None) -> None:
        self.result, self.error = result, error
        self.event.set()

    def wait(self, timeout: Optional[float], what: str) -> Any:
        if not self.event.wait(timeout):
            raise TimeoutError(f"no answer to {what} within {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result
