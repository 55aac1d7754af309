"""What the tests share: a real `herald serve` process on free ports (`Server`, and the
`server` fixture that stops it), an address where nothing listens, `wait_until`, records
the client would refuse to write (`bad_record`, sent as a `CraftedRecord`), and `resend`,
which sends records under a client's producer id and numbers, as after a failover."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import pytest

from herald import Kind, Record
from herald.wire.frames import Ack, AckLevel, FrameBuffer, Hello, Publish, encode_frame
from herald.wire.msgpack_codec import Writer

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
        self.http = ""
        # OTLP/gRPC's address, when the settings ask for it (`otlp_grpc`).
        self.otlp_grpc = ""
        self.lines: List[str] = []
        found = threading.Event()
        wants_grpc = "otlp_grpc" in (settings or {})

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.lines.append(line)
                if "herald serving on " in line and not self.address:
                    self.address = line.split("herald serving on ", 1)[1].split()[0]
                if "herald http on " in line and not self.http:
                    # Printed right after the native address: both are known now.
                    self.http = line.split("herald http on ", 1)[1].split()[0]
                    if not wants_grpc:
                        found.set()
                if "herald otlp/grpc on " in line and not self.otlp_grpc:
                    # Printed right after the HTTP address.
                    self.otlp_grpc = line.split("herald otlp/grpc on ", 1)[1].split()[0]
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


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout} s")
        time.sleep(0.02)


def bad_record(
    subject: str,
    priority: int = 4,
    kind: Kind = Kind.MESSAGE,
    time_ns: Optional[int] = None,
    field: str = "counter",
) -> bytes:
    """A record the server refuses and this client does not decode, written with the
    low-level Writer, which skips the checks the client makes at the call: a field (``field``)
    holding a MessagePack extension of type 5, which is no Herald value type, or an undefined
    priority such as 7. ``time_ns`` is now unless given."""
    w = Writer()
    w.map_len(5)
    w.uint(0)
    w.uint(int(kind))
    w.uint(1)
    w.string(subject)
    w.uint(3)
    w.sint(time.time_ns() if time_ns is None else time_ns)
    w.uint(4)
    w.uint(priority)
    w.uint(8)
    w.map_len(1)
    w.string(field)
    w.raw(UNKNOWN_EXTENSION)
    return w.getvalue()


# A fixext 8 of extension type 5: well-formed MessagePack, but no Herald value.
UNKNOWN_EXTENSION = bytes.fromhex("d7050000000000000001")


class CraftedRecord(Record):
    """A Record whose bytes are given: how a test sends (or has a frame carry) what the client
    would refuse to write."""

    def __init__(self, data: bytes, subject: str = "crafted") -> None:
        super().__init__(kind=Kind.MESSAGE, subject=subject, time=0)
        self.data = data

    def to_bytes(self) -> bytes:
        return self.data


def resend(address: str, producer: int, first_seq: int, records: List[Record]) -> Ack:
    """Sends ``records`` numbered from ``first_seq`` under ``producer`` on a connection of its
    own (as a client whose link failed would, on its next connection) and returns the ACK."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(encode_frame(Hello(name="resender", producer=producer)))
        sock.sendall(encode_frame(Publish(1, AckLevel.RECEIVED, records, first_seq)))
        buffer = FrameBuffer()
        while True:
            frame = buffer.next_frame()
            if isinstance(frame, Ack):
                return frame
            if frame is None:
                data = sock.recv(65536)
                assert data, "the server closed the connection"
                buffer.feed(data)
