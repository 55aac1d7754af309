"""Samples the server every few seconds: RSS (VmRSS of /proc/PID/status, and its anonymous
and file-backed parts), CPU (utime+stime of
/proc/PID/stat over the interval, as % of one core), open file descriptors (entries of
/proc/PID/fd), threads, and the monitor (`GET /monitor`): records_in, deliveries, dropped,
queues.bytes, connections, subscriptions, the archive's backlog. Also the CPU of the load
generators (this process and the workers). Each row goes to the CSV at once."""

from __future__ import annotations

import csv
import json
import os
import threading
import time
import urllib.request
from typing import Any, Callable, Dict, List, Optional

COLUMNS = [
    "time",
    "elapsed_s",
    "phase",
    "rss_kib",
    "rss_anon_kib",
    "rss_file_kib",
    "cpu_pct",
    "fds",
    "threads",
    "records_in",
    "deliveries",
    "dropped",
    "queued_bytes",
    "connections",
    "subscriptions",
    "archive_backlog",
    "archive_written",
    "load_cpu_pct",
]
TICK = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            after = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(after[11]) + int(after[12])  # utime, stime (fields 14 and 15)


def status(pid: int) -> Dict[str, int]:
    found = {}
    with open(f"/proc/{pid}/status") as lines:
        for line in lines:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "Threads"):
                found[key] = int(value.split()[0])
    return found


class Sampler(threading.Thread):
    def __init__(
        self,
        pid: int,
        http: str,
        interval: float,
        path: str,
        load_pids: Callable[[], List[int]],
    ) -> None:
        super().__init__(name="sampler", daemon=True)
        self.pid, self.http, self.interval = pid, http, interval
        self.load_pids = load_pids
        self.phase = "setup"
        self.rows: List[Dict[str, Any]] = []
        self.errors: List[str] = []
        self.stopped = threading.Event()
        self.out = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.out, COLUMNS)
        self.writer.writeheader()
        self.start_time = time.monotonic()
        self.last: Optional[tuple] = None
        self.last_load: Dict[int, int] = {}

    def run(self) -> None:
        while not self.stopped.wait(
            self.interval - (time.monotonic() - self.start_time) % self.interval
        ):
            self.sample()

    def monitor(self) -> Dict[str, Any]:
        with urllib.request.urlopen(f"http://{self.http}/monitor", timeout=10) as answer:
            return json.loads(answer.read())

    def sample(self) -> Optional[Dict[str, Any]]:
        now = time.monotonic()
        ticks = cpu_ticks(self.pid)
        if ticks is None:
            self.errors.append(f"{time.strftime('%H:%M:%S')} the server process is gone")
            return None
        row: Dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "elapsed_s": round(now - self.start_time, 2),
            "phase": self.phase,
        }
        try:
            found = status(self.pid)
            row.update(
                rss_kib=found.get("VmRSS"),
                rss_anon_kib=found.get("RssAnon"),
                rss_file_kib=found.get("RssFile"),
                threads=found.get("Threads"),
                fds=len(os.listdir(f"/proc/{self.pid}/fd")),
            )
        except OSError as err:
            self.errors.append(f"{time.strftime('%H:%M:%S')} /proc: {err}")
        if self.last is not None:
            row["cpu_pct"] = round(100.0 * (ticks - self.last[1]) / TICK / (now - self.last[0]), 1)
            row["load_cpu_pct"] = round(100.0 * self.load_ticks() / TICK / (now - self.last[0]), 1)
        else:
            self.load_ticks()
        self.last = (now, ticks)
        try:
            data = self.monitor()
            archive = data.get("archive", {})
            row.update(
                records_in=data["records_in"],
                deliveries=data["deliveries"],
                dropped=data["dropped"],
                queued_bytes=data["queues"]["bytes"],
                connections=data["connections"],
                subscriptions=data["subscriptions"],
                archive_backlog=archive.get("backlog"),
                archive_written=archive.get("written"),
            )
        except (OSError, ValueError, KeyError) as err:
            self.errors.append(f"{time.strftime('%H:%M:%S')} GET /monitor: {err}")
        self.rows.append(row)
        self.writer.writerow(row)
        self.out.flush()
        return row

    def load_ticks(self) -> int:
        """CPU ticks of the load generators since the last call."""
        total = 0
        current = {}
        for pid in [os.getpid()] + self.load_pids():
            ticks = cpu_ticks(pid)
            if ticks is not None:
                current[pid] = ticks
                total += ticks - self.last_load.get(pid, ticks)
        self.last_load = current
        return total

    def stop(self) -> None:
        self.stopped.set()
        self.join()
        self.sample()
        self.out.close()


def snapshot(pid: int, path: str) -> None:
    """Keeps /proc/PID/status, smaps_rollup and the largest mappings of smaps (where the
    memory is) in `path`."""
    with open(path, "w") as out:
        for name in ("status", "smaps_rollup"):
            try:
                with open(f"/proc/{pid}/{name}") as source:
                    out.write(f"== /proc/{pid}/{name}\n{source.read()}\n")
            except OSError as err:
                out.write(f"== /proc/{pid}/{name}: {err}\n")
        try:
            mappings = []
            with open(f"/proc/{pid}/smaps") as source:
                header = ""
                for line in source:
                    if line.startswith("Rss:"):
                        mappings.append((int(line.split()[1]), header))
                    elif not line[:1].isupper():
                        header = line.rstrip()
            out.write(f"== the 15 largest mappings of /proc/{pid}/smaps by Rss (kB)\n")
            for rss, where in sorted(mappings, reverse=True)[:15]:
                out.write(f"{rss:>9} {where}\n")
        except OSError as err:
            out.write(f"== /proc/{pid}/smaps: {err}\n")
