"""The soak's load: producers of log records, the info-object updater and the archive querier.
Each runs in a worker process until its deadline and leaves a result file (common.Result)."""

from __future__ import annotations

import json
import math
import random
import sys
import threading
import time
import urllib.parse
import urllib.request
from typing import Any, Dict, List

import herald
from common import (
    MOUNT_ATTRIBUTES,
    PRIORITY_TABLE,
    SENSOR_ATTRIBUTES,
    Result,
    glob_regex,
    info_objects,
    producer_subjects,
)
from herald import Priority

FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " * 4


def connect(cfg: Dict[str, Any], name: str) -> herald.Client:
    # No failover: a lost connection is an error of the soak, not something to paper over.
    return herald.connect(cfg["url"], name=name, reconnect_timeout=0)


# ---- producers -----------------------------------------------------------------------------


def producer(cfg: Dict[str, Any], k: int, result: Result, stats: Dict[str, Any]) -> None:
    """Logs at `rate` records/s on four subjects at every priority, with a storm (`storm_factor`
    times the rate for `storm_seconds`) every `storm_every` seconds; each record carries its
    producer `p` and sequence number `n` (0, 1, 2, …). Flushes every second."""
    rng = random.Random(k)
    subjects = producer_subjects(k)
    counts = {p.name: 0 for p in Priority}
    stats.update(sent=0, by_priority=counts)
    try:
        client = connect(cfg, f"soak-producer-{k}")
        result.call()
    except herald.HeraldError as err:
        result.error(f"producer {k}: connect", err)
        return
    n = 0
    start = last = time.monotonic()
    owed = 0.0
    next_flush = start + 1.0
    offset = k * cfg["storm_every"] / max(1, cfg["producers"])
    try:
        while time.time() < cfg["deadline"]:
            now = time.monotonic()
            storm = (now - start + offset) % cfg["storm_every"] < cfg["storm_seconds"]
            owed += cfg["rate"] * (cfg["storm_factor"] if storm else 1.0) * (now - last)
            last = now
            while owed >= 1.0:
                priority = rng.choice(PRIORITY_TABLE)
                text = f"p{k} n{n} " + FILLER[: rng.randint(8, 240)]
                client.log(priority, rng.choice(subjects), text, p=k, n=n)
                counts[priority.name] += 1
                n += 1
                owed -= 1.0
                stats["sent"] = n
            if now >= next_flush:
                client.flush(timeout=30)
                result.call()
                next_flush += 1.0
            time.sleep(0.01)
        client.flush(timeout=30)
        result.call()
    except (herald.HeraldError, OSError, ValueError) as err:
        result.error(f"producer {k} after {n} records", err)
    finally:
        client.close()


def run_producers(cfg: Dict[str, Any], result: Result) -> None:
    stats: Dict[str, Dict[str, Any]] = {str(k): {} for k in range(1, cfg["producers"] + 1)}
    threads = [
        threading.Thread(target=producer, args=(cfg, k, result, stats[str(k)]), daemon=True)
        for k in range(1, cfg["producers"] + 1)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.data["producers"] = stats


# ---- info objects --------------------------------------------------------------------------


def attributes(name: str, kind: str, t: float, i: int) -> Dict[str, Any]:
    if kind == "SoakMount":
        return {
            "az": round((i * 1.7 + t * 0.5) % 360.0, 4),
            "el": round(45.0 + 30.0 * math.sin(t / 60.0 + i), 4),
            "tracking": (int(t) + i) % 10 != 0,
            "mode": ("track", "slew", "stow")[(int(t / 30) + i) % 3],
        }
    return {"value": round(4.0 + math.sin(t / 20.0 + i) + 0.01 * (i % 7), 5), "unit": "K"}


def run_info(cfg: Dict[str, Any], result: Result) -> None:
    """Declares two types, creates every object, prints `ready` and waits for `go DEADLINE`
    on stdin, then updates the objects round robin at `info_rate` updates/s in all."""
    objects = info_objects()
    versions: Dict[str, int] = {}
    result.data["versions"] = versions
    try:
        client = connect(cfg, "soak-info")
        client.declare_type("SoakMount", MOUNT_ATTRIBUTES, description="soak: a mount")
        client.declare_type("SoakSensor", SENSOR_ATTRIBUTES, description="soak: a sensor")
        result.call(2)
        for i, (name, kind) in enumerate(objects):
            versions[name] = client.set_info(name, kind, **attributes(name, kind, 0.0, i))[
                "version"
            ]
            result.call()
    except herald.HeraldError as err:
        result.error("info: setup", err)
        print("ready", flush=True)
        sys.stdin.readline()
        return
    print("ready", flush=True)
    cfg["deadline"] = float(sys.stdin.readline().split()[1])  # `go DEADLINE` from the driver
    start = time.monotonic()
    done = 0
    try:
        while time.time() < cfg["deadline"]:
            t = time.monotonic() - start
            due = int(t * cfg["info_rate"])
            while done < due:
                i = done % len(objects)
                name, kind = objects[i]
                versions[name] = client.set_info(name, **attributes(name, kind, t, i))["version"]
                result.call()
                done += 1
            time.sleep(0.01)
    except herald.HeraldError as err:
        result.error(f"info: update {done}", err)
    finally:
        result.data["updates"] = done
        client.close()


# ---- archive queries -----------------------------------------------------------------------


def http_json(base: str, path: str, params: Dict[str, str]) -> Any:
    url = f"{base}{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=30) as answer:
        if answer.status != 200:
            raise OSError(f"GET {url}: HTTP {answer.status}")
        return json.loads(answer.read())


def run_archive(cfg: Dict[str, Any], result: Result) -> None:
    """Every `query_every` seconds: the archived logs of the last minute (ERROR and above, of
    one producer) and an info object's samples and buckets of the last minutes through the
    Python client, the same over HTTP (`GET /archive/logs`, `/archive/samples`), a list of the
    info objects and a native MONITOR. Answers are checked for what they must hold."""
    latencies: Dict[str, List[float]] = {}
    returned: Dict[str, int] = {}
    result.data.update(latencies=latencies, returned=returned)
    base = f"http://{cfg['http']}"
    subject_re = glob_regex("SOAK.log.*.p1")
    mounts = [name for name, kind in info_objects() if kind == "SoakMount"]

    def timed(what: str, call: Any) -> Any:
        started = time.monotonic()
        try:
            answer = call()
        except Exception as err:  # any failure of a client call is a finding
            result.error(f"archive: {what}", err)
            return None
        finally:
            result.call()
        latencies.setdefault(what, []).append(time.monotonic() - started)
        return answer

    try:
        client = connect(cfg, "soak-archive")
    except herald.HeraldError as err:
        result.error("archive: connect", err)
        return
    rounds = 0
    while time.time() < cfg["deadline"]:
        name = mounts[rounds % len(mounts)]
        logs = timed("logs", lambda: client.logs("-1m", "now", ">=ERROR", "SOAK.log.*.p1"))
        if logs is not None:
            returned["logs"] = returned.get("logs", 0) + len(logs)
            for row in logs:
                if row["priority"] < Priority.ERROR or not subject_re.fullmatch(row["subject"]):
                    result.error(f"archive: logs answered a record it should not: {row}")
                    break
        samples = timed("samples", lambda n=name: client.samples(n, "-2m", "now"))
        if samples is not None:
            returned["samples"] = returned.get("samples", 0) + len(samples)
        timed("buckets", lambda n=name: client.buckets(n, "-5m", "now", 30))
        page = timed(
            "http logs",
            lambda: http_json(
                base,
                "/archive/logs",
                {"from": "-2m", "priority": ">=CRITICAL", "subject": "SOAK.log.*", "limit": "1000"},
            ),
        )
        if page is not None:
            returned["http logs"] = returned.get("http logs", 0) + len(page["records"])
        timed(
            "http samples", lambda n=name: http_json(base, f"/archive/samples/{n}", {"from": "-2m"})
        )
        listed = timed("list_info", lambda: client.list_info(r"SOAK\.info\..*"))
        if listed is not None and len(listed) != len(info_objects()):
            result.error(f"archive: list_info gave {len(listed)} objects")
        timed("monitor", client.monitor)
        rounds += 1
        pause = cfg["deadline"] - time.time()
        time.sleep(max(0.0, min(cfg["query_every"], pause)))
    result.data["rounds"] = rounds
    client.close()
