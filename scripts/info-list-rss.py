#!/usr/bin/env python3
"""Measures what one large `GET /info` costs the server in memory: starts `herald serve`
(release build) on a fresh data directory, creates COUNT info objects, then lists them all
over HTTP once while sampling the server's RSS every 5 ms. Prints RSS before, the peak during
the listing, and the bytes and objects received. Run by hand (docs/reliability.md):

    cargo build --release -p herald-server
    python3 scripts/info-list-rss.py [COUNT]   # default 240000

Needs the Python client on the path (python/) and msgpack; uses loopback ports 17421-17422.
"""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

import herald  # noqa: E402
from herald.wire.frames import (  # noqa: E402
    FrameBuffer,
    FrameType,
    Hello,
    Info,
    Pong,
    Welcome,
    encode_frame,
)
from herald.wire.info import Update, UpdateMode  # noqa: E402

NATIVE = "127.0.0.1:17421"
HTTP = "127.0.0.1:17422"


def rss_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def create_objects(count: int) -> None:
    """INFO creates pipelined on one socket, replies counted as they come."""
    host, port = NATIVE.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(encode_frame(Hello(name="rss-loader")))
        buffer = FrameBuffer()
        welcome = None
        while welcome is None:
            buffer.feed(sock.recv(65536))
            welcome = buffer.next_frame()
        assert isinstance(welcome, Welcome), welcome
        now = time.time_ns()
        lock = threading.Lock()

        def write() -> None:
            chunk = []
            for i in range(count):
                update = Update(UpdateMode.CREATE, f"Load.Object{i:06d}", "Probe", now, {"n": i})
                chunk.append(encode_frame(Info(i + 1, update)))
                if len(chunk) == 2000 or i == count - 1:
                    with lock:
                        sock.sendall(b"".join(chunk))
                    chunk = []

        threading.Thread(target=write, daemon=True).start()
        answered = 0
        while answered < count:
            data = sock.recv(1 << 20)
            if not data:
                raise RuntimeError(f"server closed the connection after {answered} replies")
            buffer.feed(data)
            while (raw := buffer.next_raw()) is not None:
                if raw[4] == FrameType.INFO_REPLY:
                    answered += 1
                elif raw[4] == FrameType.PING:
                    with lock:
                        sock.sendall(encode_frame(Pong()))
                else:
                    raise RuntimeError(f"creating objects: frame type {raw[4]}")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 240_000
    binary = os.environ.get("INFO_RSS_HERALD_BIN", str(ROOT / "target/release/herald"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    with tempfile.TemporaryDirectory(prefix="herald-info-rss-") as data:
        server = subprocess.Popen(
            [
                binary,
                "serve",
                "--listen",
                NATIVE,
                "--http",
                HTTP,
                "--data-dir",
                data,
                "--log-level",
                "warn",
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        try:
            deadline = time.time() + 30
            while True:
                try:
                    socket.create_connection(NATIVE.rsplit(":", 1), timeout=1).close()
                    break
                except OSError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.1)
            with herald.connect(f"herald://{NATIVE}", name="rss-declare") as client:
                client.declare_type("Probe", [("n", "u32", "a number")])
            started = time.time()
            create_objects(count)
            print(f"created {count} objects in {time.time() - started:.1f} s")
            time.sleep(1)
            before = rss_kib(server.pid)
            peak = before
            done = threading.Event()

            def sample() -> None:
                nonlocal peak
                while not done.is_set():
                    peak = max(peak, rss_kib(server.pid))
                    time.sleep(0.005)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            started = time.time()
            received = 0
            with urllib.request.urlopen(f"http://{HTTP}/info", timeout=120) as response:
                chunked = response.headers.get("Transfer-Encoding") == "chunked"
                tail = b""
                objects = 0
                carry = b""
                while chunk := response.read(1 << 16):
                    received += len(chunk)
                    # A marker split across two reads is counted once, in the later one.
                    window = carry + chunk
                    objects += window.count(b'"name":')
                    carry = window[-6:]
                    tail = window[-200:]
            elapsed = time.time() - started
            done.set()
            sampler.join()
            after = rss_kib(server.pid)
            print(
                f"GET /info: {received} bytes, {objects} objects, {elapsed:.1f} s, "
                f"chunked={chunked}"
            )
            print(
                f"RSS before {before / 1024:.1f} MiB, peak during {peak / 1024:.1f} MiB "
                f"(+{(peak - before) / 1024:.1f} MiB), after {after / 1024:.1f} MiB"
            )
            if objects != count:
                print(f"expected {count} objects; tail: {tail!r}")
                sys.exit(1)
        finally:
            server.kill()
            server.wait(10)


if __name__ == "__main__":
    main()
