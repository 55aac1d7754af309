"""Benchmarks of the logging handler's disk buffer (not a test).

Run from the repository root: python3 python/benches/bench_disk_buffer.py [RECORDS]
Starts target/release/herald serve (archive off) as bench_client.py does, then measures
  (a) the cost of one logger.info("message %d", i) (100,000 calls after 10,000 warm-up calls,
      each timed with perf_counter_ns) through HeraldHandler with a disk buffer: connected to
      the server, and through a full outage (nothing listens on the URL: every record goes
      to disk on the background thread); and without a disk buffer, connected, for reference;
  (b) replay: RECORDS (default 500,000) log records of a 40-byte message put on disk by a
      handler with no server, then a handler started on the server's URL: the time from its
      start until the server has acknowledged every record on disk; and reading them back
      from disk alone (Spool.read), without the network.
Prints a markdown table and one JSON line.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_client import make_logger, start_server, time_calls  # noqa: E402

from herald.logging import HeraldHandler  # noqa: E402
from herald.spool import Spool  # noqa: E402


def closed_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"herald://127.0.0.1:{s.getsockname()[1]}"


def call_cost(url: str, buffer_dir: Any, offline: bool) -> Dict[str, Any]:
    handler = HeraldHandler(url, name="bench-spool", capacity=200_000, buffer_dir=buffer_dir)
    if offline:
        time.sleep(0.2)  # the first connection attempt fails: the handler knows it is offline
    result: Dict[str, Any] = dict(time_calls(make_logger(handler)))
    if offline:
        deadline = time.monotonic() + 60
        while handler._buffer and time.monotonic() < deadline:
            time.sleep(0.01)
    else:
        result["flushed"] = handler.wait_flushed(60)
    result["sent"], result["dropped"] = handler.sent, handler.dropped
    result["spool_lost"] = handler.spool_lost
    handler.flush_timeout = 0.5
    handler.close()
    return result


def fill(directory: str, records: int) -> float:
    handler = HeraldHandler(
        closed_url(), capacity=records + 1, buffer_dir=directory, storm_repeats=0
    )
    logger = make_logger(handler)
    start = time.perf_counter()
    for i in range(records):
        logger.info("replayed record number %d of the benchmark", i)
    while handler._buffer:
        time.sleep(0.01)
    elapsed = time.perf_counter() - start
    handler.flush_timeout = 0.5
    handler.close()
    return elapsed


def read_back(directory: str) -> Dict[str, Any]:
    spool = Spool(directory)
    start = time.perf_counter()
    count = 0
    while True:
        got = spool.read(1 << 20)
        if not got:
            break
        count += len(got)
    elapsed = time.perf_counter() - start
    spool.close()
    return {"records": count, "seconds": elapsed, "records_per_s": count / elapsed}


def replay(url: str, directory: str, records: int) -> Dict[str, Any]:
    start = time.perf_counter()
    handler = HeraldHandler(url, buffer_dir=directory, storm_repeats=0)
    while not handler.spool_pending:  # opened: pending until acknowledged
        if time.perf_counter() - start > 5:
            break
        time.sleep(0.001)
    while handler.spool_pending:
        time.sleep(0.005)
    elapsed = time.perf_counter() - start
    handler.close()
    return {"records": records, "seconds": elapsed, "records_per_s": records / elapsed}


def main() -> None:
    records = int(sys.argv[1]) if len(sys.argv) > 1 else 500_000
    with tempfile.TemporaryDirectory() as data_dir, tempfile.TemporaryDirectory() as spool:
        proc, url = start_server(data_dir)
        try:
            costs = {
                "connected, no disk buffer": call_cost(url, None, False),
                "connected, disk buffer": call_cost(url, os.path.join(spool, "a"), False),
                "outage, disk buffer": call_cost(closed_url(), os.path.join(spool, "b"), True),
            }
            fill_s = fill(os.path.join(spool, "c"), records)
            disk = read_back(os.path.join(spool, "c"))
            sent = replay(url, os.path.join(spool, "c"), records)
        finally:
            proc.kill()
            proc.wait(10)
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs\n")
    print("| measurement | result |")
    print("|---|---|")
    for name, r in costs.items():
        print(
            f'| `logger.info("message %d", i)`, {name} | median {r["median_ns"]:,.0f} ns, '
            f"mean {r['mean_ns']:,.0f} ns (dropped {r['dropped']}) |"
        )
    print(f"| put {records:,} records on disk (no server) | {records / fill_s:,.0f} records/s |")
    print(f"| read them back from disk alone | {disk['records_per_s']:,.0f} records/s |")
    print(
        f"| replay them to the server until acknowledged | {sent['seconds']:.2f} s = "
        f"{sent['records_per_s']:,.0f} records/s |"
    )
    print()
    print(json.dumps({"costs": costs, "fill_s": fill_s, "read": disk, "replay": sent}))


if __name__ == "__main__":
    main()
