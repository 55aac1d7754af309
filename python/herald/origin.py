"""The origin this process puts on its log records: host, process and calling thread."""

from __future__ import annotations

import os
import socket
import sys
import threading

from .wire.record import Origin

HOST = socket.gethostname() or "localhost"
_process = (0, "")  # (pid, name): made again after a fork
_per_thread = threading.local()


def process_name() -> str:
    """``<program>[<pid>]``, as the Rust client writes it."""
    global _process
    pid = os.getpid()
    if _process[0] != pid:
        program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
        _process = (pid, f"{program or 'python'}[{pid}]")
    return _process[1]


def local_origin() -> Origin:
    """Host, process and the calling thread's name."""
    return Origin(host=HOST, process=process_name(), thread=threading.current_thread().name)


def shared_local_origin() -> Origin:
    """:func:`local_origin`, one object per thread (made again when the process or the thread's
    name changes): only for records encoded at once and never handed out, as an Origin can be
    changed."""
    key = (os.getpid(), threading.current_thread().name)
    cached = getattr(_per_thread, "value", None)
    if cached is None or cached[0] != key:
        cached = _per_thread.value = (key, local_origin())
    return cached[1]
