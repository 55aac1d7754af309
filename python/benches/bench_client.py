"""Benchmarks of the Python client (not a test): records/s and the cost of a logging call.

Run from the repository root: python3 python/benches/bench_client.py
Starts target/release/herald serve (archive off, HERALD_ARCHIVE_BACKEND=none) on free ports
in a temporary data dir, then measures
  (a) records/s: one process publishes 200,000 log records of 128-byte text (batched by the
      client) until flush() returns;
  (b) the cost of one logger.info("message %d", i) (100,000 calls after 10,000 warm-up calls,
      each timed with perf_counter_ns, so the timer's own cost is included) through
      HeraldHandler, QueueHandler (SimpleQueue + QueueListener to a NullHandler) and
      SocketHandler (to a local TCP sink thread that reads and discards).
Prints a markdown table and one JSON line.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import platform
import queue
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import herald  # noqa: E402
from herald.logging import HeraldHandler  # noqa: E402

RECORDS = 200_000
CALLS = 100_000
WARMUP = 10_000


def start_server(data_dir: str) -> Tuple[subprocess.Popen, str]:
    env = dict(os.environ, HERALD_ARCHIVE_BACKEND="none")
    proc = subprocess.Popen(
        [
            str(REPO / "target" / "release" / "herald"),
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--data-dir",
            data_dir,
            "--log-level",
            "warn",
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    for line in proc.stderr:
        if "herald serving on " in line:
            address = line.split("herald serving on ", 1)[1].split()[0]
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, f"herald://{address}"
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise SystemExit("herald serve printed no address")


def bench_publish(url: str) -> Dict[str, Any]:
    text = "x" * 128
    with herald.connect(url, name="bench-publish") as client:
        start = time.perf_counter()
        for _ in range(RECORDS):
            client.log(herald.Priority.INFO, "bench.python", text)
        client.flush(timeout=60)
        elapsed = time.perf_counter() - start
    return {"records": RECORDS, "seconds": elapsed, "records_per_s": RECORDS / elapsed}


def time_calls(logger: logging.Logger) -> Dict[str, float]:
    clock = time.perf_counter_ns
    for i in range(WARMUP):
        logger.info("message %d", i)
    samples: List[int] = []
    append = samples.append
    for i in range(CALLS):
        t0 = clock()
        logger.info("message %d", i)
        append(clock() - t0)
    return {"median_ns": statistics.median(samples), "mean_ns": statistics.fmean(samples)}


def make_logger(handler: logging.Handler) -> logging.Logger:
    logger = logging.getLogger("bench.handler")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


def with_herald(url: str) -> Dict[str, Any]:
    # capacity above WARMUP + CALLS so that no record is dropped (dropping is cheaper)
    handler = HeraldHandler(url, name="bench-logging", capacity=200_000)
    result: Dict[str, Any] = dict(time_calls(make_logger(handler)))
    result["flushed"] = handler.wait_flushed(60)
    result["sent"], result["dropped"] = handler.sent, handler.dropped
    handler.close()
    return result


def with_queue(_: str) -> Dict[str, Any]:
    q: queue.SimpleQueue[Any] = queue.SimpleQueue()
    listener = logging.handlers.QueueListener(q, logging.NullHandler())
    listener.start()
    result: Dict[str, Any] = dict(time_calls(make_logger(logging.handlers.QueueHandler(q))))
    listener.stop()
    return result


def with_socket(_: str) -> Dict[str, Any]:
    server = socket.create_server(("127.0.0.1", 0))
    received = [0]

    def sink() -> None:
        conn, _ = server.accept()
        with conn:
            while True:
                data = conn.recv(1 << 16)
                if not data:
                    return
                received[0] += len(data)

    thread = threading.Thread(target=sink, daemon=True)
    thread.start()
    handler = logging.handlers.SocketHandler("127.0.0.1", server.getsockname()[1])
    result: Dict[str, Any] = dict(time_calls(make_logger(handler)))
    handler.close()
    thread.join(30)
    server.close()
    result["bytes_received"] = received[0]
    return result


def main() -> None:
    cases: List[Tuple[str, Callable[[str], Dict[str, Any]]]] = [
        ("HeraldHandler", with_herald),
        ("QueueHandler (SimpleQueue + QueueListener → NullHandler)", with_queue),
        ("SocketHandler (local TCP sink thread)", with_socket),
    ]
    with tempfile.TemporaryDirectory() as data_dir:
        proc, url = start_server(data_dir)
        try:
            publish = bench_publish(url)
            handlers = {name: run(url) for name, run in cases}
        finally:
            proc.kill()
            proc.wait(10)
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs\n")
    print("| measurement | result |")
    print("|---|---|")
    print(
        f"| publish {RECORDS:,} log records, 128-byte text, until flush() | "
        f"{publish['seconds']:.2f} s = {publish['records_per_s']:,.0f} records/s |"
    )
    for name, r in handlers.items():
        print(
            f'| `logger.info("message %d", i)` via {name} | '
            f"median {r['median_ns']:,.0f} ns, mean {r['mean_ns']:,.0f} ns |"
        )
    print()
    print(
        json.dumps(
            {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "publish": publish,
                "handlers": handlers,
            }
        )
    )


if __name__ == "__main__":
    main()
