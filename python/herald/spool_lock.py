"""The lock file of a disk buffer directory: one producer per directory. Two processes that
shared one would number their records alike under one producer id, and servers would drop
one's records as the other's repeats.

The lock is ``flock`` on ``<dir>/lock``, held while the buffer is open and let go by the
operating system when the process ends (a crash leaves no stale lock). The file says who holds
it (``pid=… host=…``), for the error the next one gets."""

from __future__ import annotations

import os
import socket
from typing import Optional

from .errors import SpoolLockedError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "lock"


class SpoolLock:
    """Holds the lock of ``directory``; raises SpoolLockedError naming the holder."""

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, LOCK_NAME)
        self._fd: Optional[int] = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            self._take()
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise
        holder = f"pid={os.getpid()} host={socket.gethostname()}\n".encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, holder, 0)

    def _take(self) -> None:
        assert self._fd is not None
        if fcntl is None:  # pragma: no cover - no flock: trust the caller
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self._fd, 200, 0).decode(errors="replace").strip()
            raise SpoolLockedError(os.path.dirname(self.path), holder or "unknown") from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor lets go of the flock
            self._fd = None
