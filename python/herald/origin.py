"""The origin this process puts on its log records: host, process and calling thread."""

from __future__ import annotations

import os
import socket
import sys
import threading

from .wire.record import Origin

_HOST = socket.gethostname() or "localhost"


def process_name() -> str:
    """``<program>[<pid>]``, as the Rust client writes it."""
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return f"{program or 'python'}[{os.getpid()}]"


def local_origin() -> Origin:
    """Host, process and the calling thread's name."""
    return Origin(host=_HOST, process=process_name(), thread=threading.current_thread().name)
