"""Soak test driver: runs a mixed load against one running `herald serve` for MINUTES, samples
the server, and checks it at the end. Started by scripts/soak.sh, which starts and stops the
server; see that script's header and docs/reliability.md (Soak) for what runs and what is
checked, and ledger.py for how every subscription is accounted for exactly.

    soak.py --native HOST:PORT --http HOST:PORT --server-pid PID --server-log FILE
            --minutes M --out DIR                       the driver
    soak.py worker ROLE RESULT.json CONFIG-JSON         one load process (started by the driver)
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Set, Tuple

import herald
import report
from common import (
    ALL,
    Result,
    load_json,
)
from herald import Priority, PrioritySet
from ledger import Ledger, publish_fence, self_test
from sampler import Sampler, snapshot

HERE = os.path.dirname(os.path.abspath(__file__))


def env_number(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value in (None, "") else float(value)


def plan(args: argparse.Namespace) -> Dict[str, Any]:
    """The load. Defaults: 4 producers × 250 records/s (with a 4× storm of 1.5 s every 45 s
    each: about 1,100 records/s in all), 300 info updates/s over 300 objects, 3 log and 1 info
    subscribers coming and going, 2 slow subscribers, archive queries every 10 s."""
    return {
        "url": f"herald://{args.native}",
        "native": args.native,
        "http": args.http,
        "producers": int(env_number("SOAK_PRODUCERS", 4)),
        "rate": env_number("SOAK_RATE", 250.0),
        "storm_every": 45.0,
        "storm_seconds": 1.5,
        "storm_factor": 4.0,
        "info_rate": env_number("SOAK_INFO_RATE", 300.0),
        "query_every": 10.0,
        "churn_log": 3,
        "churn_info": 1,
        "slow": [
            {
                "name": "slowA",
                "subject": "SOAK.log.*",
                "priorities": [int(p) for p in ALL],
                "policy": "drop-new",
                "max_records": 2000,
                "rate": 250.0,
                "rcvbuf": 8192,
            },
            {
                "name": "slowB",
                "subject": "SOAK.log.*",
                "priorities": [int(p) for p in PrioritySet.at_least(Priority.DEBUG).priorities()],
                "policy": "drop-old",
                "max_bytes": 256 * 1024,
                "rate": 200.0,
                "rcvbuf": 8192,
            },
        ],
    }


# ---- workers -------------------------------------------------------------------------------


def worker(role: str, path: str, cfg: Dict[str, Any]) -> int:
    import load
    import subs

    result = Result(role, path)
    try:
        if role == "info":
            load.run_info(cfg, result)
        elif role == "producers":
            load.run_producers(cfg, result)
        elif role == "archive":
            load.run_archive(cfg, result)
        elif role == "churn":
            subs.run_churn(cfg, result)
        elif role == "slow":
            subs.run_slow(cfg, result)
        else:
            raise ValueError(f"unknown role {role}")
    except Exception as err:
        result.error(f"{role} worker", err)
    result.write()
    return 0


class Workers:
    def __init__(self, out: str) -> None:
        self.out = out
        self.procs: Dict[str, subprocess.Popen] = {}
        self.lines: Dict[str, queue.Queue] = {}
        self.problems: List[str] = []

    def spawn(self, role: str, cfg: Dict[str, Any], talk: bool = False) -> subprocess.Popen:
        log = open(os.path.join(self.out, "workers", f"{role}.log"), "w")
        pipe = subprocess.PIPE if talk else subprocess.DEVNULL
        proc = subprocess.Popen(
            [
                sys.executable,
                os.path.join(HERE, "soak.py"),
                "worker",
                role,
                self.result_path(role),
                json.dumps(cfg),
            ],
            stdin=pipe,
            stdout=subprocess.PIPE if talk else log,
            stderr=log,
            text=True,
        )
        self.procs[role] = proc
        if talk:
            lines: queue.Queue = queue.Queue()
            self.lines[role] = lines
            threading.Thread(target=self.listen, args=(proc, lines), daemon=True).start()
        return proc

    @staticmethod
    def listen(proc: subprocess.Popen, lines: queue.Queue) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def result_path(self, role: str) -> str:
        return os.path.join(self.out, "workers", f"{role}.json")

    def pids(self) -> List[int]:
        return [p.pid for p in list(self.procs.values()) if p.poll() is None]

    def ready(self, role: str, count: int, timeout: float) -> None:
        """Waits for `count` lines `ready` from the worker's stdout."""
        deadline = time.monotonic() + timeout
        while count > 0:
            try:
                line = self.lines[role].get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                with open(os.path.join(self.out, "workers", f"{role}.log")) as log:
                    said = log.read()[-2000:]
                raise RuntimeError(
                    f"worker {role} not ready in {timeout} s; its log:\n{said}"
                ) from None
            if line is None:
                raise RuntimeError(f"worker {role} ended before it was ready")
            count -= line.strip() == "ready"

    def tell(self, role: str, line: str) -> None:
        stdin = self.procs[role].stdin
        assert stdin is not None
        stdin.write(line + "\n")
        stdin.flush()

    def wait(self, role: str, timeout: float) -> None:
        proc = self.procs[role]
        try:
            code = proc.wait(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.problems.append(f"worker {role} did not end in time: killed")
            return
        if code != 0:
            self.problems.append(f"worker {role} exited with status {code}")

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()

    def results(self) -> Dict[str, Dict[str, Any]]:
        found = {}
        for role in self.procs:
            try:
                found[role] = load_json(self.result_path(role))
            except (OSError, ValueError) as err:
                self.problems.append(f"worker {role} left no result: {err}")
        return found


# ---- the end -------------------------------------------------------------------------------


def archive_probe(url: str, since_ns: int, expected: Set[int]) -> Tuple[bool, str]:
    """Once the archive has written everything: producer 1's CRITICAL and above over the whole
    run (`expected`: their numbers `n`, from the ledger) must all be there, once each, and
    nothing else."""
    deadline = time.monotonic() + 60
    backlog = None
    while time.monotonic() < deadline:
        try:
            with herald.connect(url, name="soak-probe", reconnect_timeout=0) as client:
                backlog = client.monitor().get("archive", {}).get("backlog")
                if backlog == 0:
                    time.sleep(2.0)  # written is not yet readable until the batch commits
                    rows = client.logs(since_ns, "now", ">=CRITICAL", "SOAK.log.*.p1")
                    numbers = [row.get("n") for row in rows]
                    archived = set(numbers)
                    absent = sorted(expected - archived)
                    extra = sorted(archived - expected, key=str)
                    twice = len(numbers) - len(archived)
                    ok = not absent and not extra and not twice
                    return ok, (
                        f"producer 1's records at CRITICAL and above: {len(expected)} in the "
                        f"ledger, {len(numbers)} archived; {len(absent)} missing"
                        + (f" (first {absent[:5]})" if absent else "")
                        + f", {len(extra)} not in the ledger"
                        + (f" (first {extra[:5]})" if extra else "")
                        + f", {twice} more than once"
                    )
        except herald.HeraldError as err:
            return False, f"archive probe failed: {err}"
        time.sleep(1.0)
    return False, f"the archive still had a backlog of {backlog} after 60 s"


def server_log_problems(path: str) -> Tuple[List[str], int]:
    """ERROR and panic lines of the server's stderr (and the count of WARN lines)."""
    bad, warns = [], 0
    with open(path, errors="replace") as lines:
        for line in lines:
            # The same pattern as the `late` count in scripts/soak.sh: change both together.
            if re.search(r"^\S+\s+ERROR\b|panic", line):
                bad.append(line.rstrip())
            elif re.search(r"^\S+\s+WARN\b", line):
                warns += 1
    return bad, warns


class ServerGone(Exception):
    """The server process ended while the load ran (the argument: seconds into the load)."""


def server_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def drive(args: argparse.Namespace) -> int:
    out = args.out
    os.makedirs(os.path.join(out, "workers"), exist_ok=True)
    cfg = plan(args)
    minutes = args.minutes
    interval = env_number("SOAK_SAMPLE_S", min(5.0, max(1.0, minutes * 60 / 240)))
    workers = Workers(out)
    sampler = Sampler(
        args.server_pid, args.http, interval, os.path.join(out, "samples.csv"), workers.pids
    )
    sampler.start()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    checks: List[Tuple[str, bool, List[str]]] = []
    try:
        ledger = Ledger(cfg["url"])
        workers.spawn("slow", cfg, talk=True)
        workers.ready("slow", len(cfg["slow"]), 60)
        workers.spawn("info", cfg, talk=True)
        workers.ready("info", 1, 120)
        load_start = time.time()
        cfg["deadline"] = load_start + minutes * 60.0
        sampler.phase = "load"
        print(
            f"soak: load running for {minutes:g} min (until {time.ctime(cfg['deadline'])})",
            flush=True,
        )
        workers.tell("info", f"go {cfg['deadline']}")
        for role in ("producers", "churn", "archive"):
            workers.spawn(role, cfg)
        while time.time() < cfg["deadline"]:
            time.sleep(min(1.0, max(0.0, cfg["deadline"] - time.time())))
            if not server_alive(args.server_pid):
                raise ServerGone(time.time() - load_start)
        load_end = time.time()
        snapshot(args.server_pid, os.path.join(out, "server-memory.txt"))
        sampler.phase = "drain"  # subscribers coming and going finish their last turn now
        for role in ("producers", "info", "churn", "archive"):
            workers.wait(role, cfg["deadline"] - time.time() + 120)
        print("soak: load done; draining the slow subscribers and the ledger", flush=True)
        workers.tell("slow", "finish")
        workers.wait("slow", 180)
        fence_error = publish_fence(cfg["url"], "driver.final")
        if fence_error or not ledger.wait_for_fence("driver.final", 120):
            workers.problems.append(fence_error or "the ledger never saw the final fence")
        results = workers.results()
        producers = results.get("producers", {}).get("producers", {})
        sent = {int(k): v.get("sent", 0) for k, v in producers.items()}
        p1 = ledger.numbers(1, PrioritySet.at_least(Priority.CRITICAL))
        probe_ok, probe_text = archive_probe(cfg["url"], int(load_start * 1e9) - 5_000_000_000, p1)
    except KeyboardInterrupt:
        workers.stop_all()
        sampler.stop()
        print("soak: interrupted", flush=True)
        return 130
    except ServerGone as gone:
        workers.stop_all()
        sampler.stop()
        bad, _ = server_log_problems(args.server_log)
        text = "\n".join(
            [
                f"herald soak {started}, {minutes:g} min: FAIL",
                f"the server process (pid {args.server_pid}) ended {gone.args[0]:.0f} s into "
                "the load; the workers were stopped. Its stderr's ERROR/panic lines:",
                *bad[:20],
                "",
            ]
        )
        with open(os.path.join(out, "summary.txt"), "w") as summary_file:
            summary_file.write(text)
        print(text, flush=True)
        return 1
    except Exception:
        workers.stop_all()
        sampler.stop()
        raise
    sampler.stop()
    alive = server_alive(args.server_pid)
    ledger.close()

    # (1) growth
    rss, fds = report.growth(sampler.rows, "rss_kib"), report.growth(sampler.rows, "fds")
    lines = []
    for check in (rss, fds):
        if check is None:
            lines.append("too few samples in the second half of the load to judge growth")
            continue
        lines.append(
            f"{check['column']}: mean of samples {check['windows'][0][0]:.0f}-"
            f"{check['windows'][0][1]:.0f} s = {check['first']:.1f}, of samples "
            f"{check['windows'][1][0]:.0f}-{check['windows'][1][1]:.0f} s = {check['last']:.1f}: "
            f"{check['pct']:+.2f} % ({check['k']} samples each, of {check['samples']} in the "
            f"second half)"
        )
    checks.append(
        (
            "1 growth of RSS and fds under 5 % over the second half",
            bool(rss and fds and rss["ok"] and fds["ok"]),
            lines,
        )
    )

    # (2) errors
    bad_lines, warns = server_log_problems(args.server_log)
    errors: List[str] = []
    for role, data in results.items():
        errors += [f"{role}: {e}" for e in data.get("errors", [])]
    calls = sum(data.get("calls", 0) for data in results.values())
    lines = [
        f"server process {'alive' if alive else 'GONE'} at the end",
        f"server stderr: {len(bad_lines)} ERROR/panic lines, {warns} WARN lines",
        *bad_lines[:10],
        f"client calls: {calls}, failed: {len(errors)}",
        *errors[:20],
        *workers.problems,
        *sampler.errors[:10],
    ]
    ok = alive and not bad_lines and not errors and not workers.problems and not sampler.errors
    checks.append(("2 no errors", ok, lines))

    # (3) accounting
    info = results.get("info", {})
    subs = results.get("churn", {}).get("subs", []) + results.get("slow", {}).get("subs", [])
    fences = [s[k] for s in subs for k in ("start", "end")] + ["driver.final"]
    ledger_problems = ledger.check_complete(sent, info.get("versions", {}), fences)
    accounted = [ledger.account(s) for s in subs] if not ledger_problems else []
    lines = [
        f"ledger: {ledger.records} records routed, "
        + (f"{len(ledger_problems)} problems" if ledger_problems else "complete"),
        *ledger_problems[:20],
    ]
    lines += report.summarize_accounts(accounted)
    lines.append(probe_text)
    noticed = self_test(ledger, subs) if accounted else False
    lines.append(
        "checker self-test (one delivered record taken out of a subscription's list): "
        + ("noticed" if noticed else "NOT NOTICED")
    )
    ok = not ledger_problems and bool(accounted) and all(not a["problems"] for a in accounted)
    ok = ok and noticed
    checks.append(("3 exact accounting for every subscription", ok and probe_ok, lines))

    passed = all(ok for _, ok, _ in checks)
    title = f"herald soak {started}, {minutes:g} min: {'PASS' if passed else 'FAIL'}"
    growths = [c for c in (rss, fds) if c]
    try:
        report.plot(sampler.rows, os.path.join(out, "soak.png"), title, growths)
    except ImportError as err:
        checks.append(("plot", False, [f"no plot: {err}"]))
        passed = False
    text = report.summary(
        title, args, cfg, sampler, results, accounted, checks, load_start, load_end
    )
    with open(os.path.join(out, "summary.txt"), "w") as summary_file:
        summary_file.write(text)
    with open(os.path.join(out, "accounting.json"), "w") as accounting_file:
        json.dump(accounted, accounting_file, indent=1)
    print(text, flush=True)
    return 0 if passed else 1


def interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        return worker(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
    # soak.sh passes on SIGINT and SIGTERM as SIGTERM (it runs this in the background, where
    # SIGINT is ignored): stop the workers as on Ctrl-C.
    signal.signal(signal.SIGTERM, interrupted)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--native", required=True)
    parser.add_argument("--http", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--server-log", required=True)
    parser.add_argument("--server-bin", default="herald")
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--out", required=True)
    return drive(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
