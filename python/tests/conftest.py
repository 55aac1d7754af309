"""What the tests share: a real `herald serve` process on free ports (`Server`, and the
`server` fixture that stops it), and an address where nothing listens."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]


def herald_bin() -> str:
    explicit = os.environ.get("HERALD_BIN")
    if explicit:
        return explicit
    binary = REPO / "target" / "debug" / "herald"
    if not binary.exists():
        if shutil.which("cargo") is None:
            pytest.fail(f"{binary} is missing and cargo is not installed to build it")
        subprocess.run(["cargo", "build", "-q", "-p", "herald-cli"], cwd=REPO, check=True)
    return str(binary)


class Server:
    """``settings`` are server settings by key (``{"max_frame_bytes": "65536"}``), given to
    the server as ``HERALD_<KEY>`` variables."""

    def __init__(
        self, tmp: Path, listen: str = "127.0.0.1:0", settings: Optional[Dict[str, str]] = None
    ) -> None:
        # The server reads every HERALD_* variable as a setting: HERALD_BIN is ours.
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
        env.update({f"HERALD_{key.upper()}": value for key, value in (settings or {}).items()})
        self.proc = subprocess.Popen(
            [
                herald_bin(),
                "serve",
                "--listen",
                listen,
                "--http",
                "127.0.0.1:0",
                "--data-dir",
                str(tmp),
                "--log-level",
                "warn",
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.address = ""
        self.lines: List[str] = []
        found = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.lines.append(line)
                if "herald serving on " in line and not self.address:
                    self.address = line.split("herald serving on ", 1)[1].split()[0]
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(60):
            self.stop()
            pytest.fail("herald serve printed no address:\n" + "".join(self.lines))
        self.url = f"herald://{self.address}"

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    try:
        yield s
    finally:
        s.stop()


def closed_port_url() -> str:
    """Returns a `herald://` URL of a loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"herald://127.0.0.1:{port}"
