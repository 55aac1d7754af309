#!/usr/bin/env bash
# Soak test: `scripts/soak.sh [MINUTES]` (default 60) runs a mixed load against one real
# `herald serve` for MINUTES, samples the server, and checks it. Everything is on loopback,
# bounded, and stops by itself; Ctrl-C or SIGTERM to the script stops the load and the server.
#
# Load (scripts/soak/soak.py, plan()): 4 producers logging 250 records/s each at all ten
# priorities TRACE..EMERGENCY, with a 4x storm of 1.5 s every 45 s (about 1,100 records/s in
# all); 300 info objects of 2 declared types updated at 300 updates/s in all (1 Hz each);
# 3 log and 1 info subscriber coming and going (subscribe, read 4-15 s, unsubscribe or - one
# time in three - drop the connection, again); 2 slow subscribers reading at 250 and 200
# records/s (about a quarter of what they match) through small socket buffers, so
# their queues fill and GAP notices come (one drop-new, one drop-old); archive queries every
# 10 s (logs and samples of the last minutes through the Python client and over HTTP
# `GET /archive/logs` and `/archive/samples`, buckets, list_info, a native MONITOR).
#
# Samples every few seconds (5 s for runs of 20 minutes or more): the server's RSS, CPU,
# open fds and threads from /proc, and records_in, deliveries, dropped, queues.bytes of
# `GET /monitor`, into samples.csv; soak.png plots them.
#
# Checks (the exit status is 0 only if all pass):
#  1. RSS and open fds grow less than 5 % over the second half of the load: the mean of the
#     last k samples of that half against the mean of its first k (k = a sixth of its
#     samples, at least 3).
#  2. No errors: the server is alive at the end and stops cleanly on SIGTERM, its stderr has
#     no ERROR or panic line, every client call of the load succeeded (no failover: clients
#     run with reconnect_timeout 0).
#  3. Exact accounting for every subscription, by server sequence numbers: a ledger
#     subscription that sheds nothing records what was routed under every number (and must
#     hold every producer's records 0..sent-1 and every info version exactly once); each
#     subscription fences its window with two records its own connection publishes after
#     subscribing and before leaving; within it, per priority, what matched its filter =
#     what it received + what its GAP notices report lost, and every record not received
#     lies in a GAP's range; a window that ends up empty or owed nothing fails (details:
#     scripts/soak/ledger.py). Also: the archive holds exactly the CRITICAL-and-above records
#     of producer 1 that the ledger holds, once each; and the checker notices one delivered
#     record taken out of a subscription's list (a self-test).
#
# Output: a directory (SOAK_OUT, default target/soak-<UTC time>/) with samples.csv, soak.png,
# server.stderr, summary.txt, accounting.json, server-memory.txt (/proc at the end of the
# load), the data dir and the workers' logs and results. docs/reliability.md (Soak) has more.
#
# Settings (SOAK_*; the server itself reads HERALD_* variables, which pass through to it):
#   SOAK_HERALD_BIN  server binary (default target/release/herald, which cargo builds or
#                    brings up to date first)
#   SOAK_OUT         output directory (refused if it already holds a run's data/ or workers/)
#   SOAK_PYTHON      python interpreter (default python3); msgpack and matplotlib are
#                    installed with pip if missing
#   SOAK_RATE, SOAK_PRODUCERS, SOAK_INFO_RATE, SOAK_SAMPLE_S   load and sampling knobs
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

minutes="${1:-60}"
if ! [[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] || [ "$minutes" = 0 ]; then
    echo "usage: scripts/soak.sh [MINUTES]   (a positive number; default 60)" >&2
    exit 2
fi

python="${SOAK_PYTHON:-python3}"
if [ -n "${SOAK_HERALD_BIN:-}" ]; then
    binary="$SOAK_HERALD_BIN"
    if [ ! -x "$binary" ]; then
        echo "soak: SOAK_HERALD_BIN=$binary is not an executable" >&2
        exit 2
    fi
else
    # Always through cargo, so the binary is the current tree's (quick when up to date).
    binary="target/release/herald"
    cargo build --release -p herald-cli --locked
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"

out="${SOAK_OUT:-target/soak-$(date -u +%Y%m%dT%H%M%SZ)}"
if [ -e "$out/data" ] || [ -e "$out/workers" ]; then
    echo "soak: $out already holds a run (data/ or workers/); choose another SOAK_OUT" >&2
    exit 2
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

for module in msgpack matplotlib; do
    if ! "$python" -c "import $module" 2>/dev/null; then
        "$python" -m pip install --quiet "$module"
    fi
done

server_pid=""
driver_pid=""
stop_message=""
running() {
    # The process exists and is not a zombie waiting to be reaped.
    kill -0 "$1" 2>/dev/null && ! grep -qE '^[0-9]+ \(.*\) [ZX] ' "/proc/$1/stat" 2>/dev/null
}
stop_server() {
    # Stops the server by its PID: SIGTERM, then SIGKILL after 30 s. Says how in stop_message.
    [ -n "$server_pid" ] || return 0
    local pid="$server_pid" waited=0 code=0
    server_pid=""
    if ! running "$pid"; then
        wait "$pid" 2>/dev/null || code=$?
        stop_message="server (pid $pid) had already exited, status $code"
        return 1
    fi
    kill -TERM "$pid"
    while running "$pid" && [ "$waited" -lt 300 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if running "$pid"; then
        kill -KILL "$pid"
        wait "$pid" 2>/dev/null || true
        stop_message="server (pid $pid) did not stop within 30 s of SIGTERM: killed"
        return 1
    fi
    wait "$pid" 2>/dev/null || code=$?
    stop_message="server (pid $pid) stopped on SIGTERM in $((waited / 10)).$((waited % 10)) s, exit status $code"
    [ "$code" = 0 ]
}
stop_driver() {
    # Stops the driver by its PID: SIGTERM (it then stops its workers), SIGKILL after 30 s.
    [ -n "$driver_pid" ] || return 0
    local pid="$driver_pid" waited=0
    driver_pid=""
    if running "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
    fi
    while running "$pid" && [ "$waited" -lt 300 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if running "$pid"; then
        echo "soak: the driver (pid $pid) did not stop within 30 s of SIGTERM: killed" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}
trap 'stop_driver; stop_server >/dev/null || true' EXIT
trap 'echo "soak: interrupted; partial results in $out" >&2; stop_driver; exit 130' INT TERM

"$binary" serve --listen 127.0.0.1:0 --http 127.0.0.1:0 --data-dir "$out/data" \
    >"$out/server.stdout" 2>"$out/server.stderr" &
server_pid=$!

# The server prints `herald serving on ADDR` and `herald http on ADDR` once it listens.
native="" http=""
for _ in $(seq 300); do
    native="$(sed -n 's/^herald serving on \([^ ]*\)$/\1/p' "$out/server.stderr" "$out/server.stdout" | head -n1)"
    http="$(sed -n 's/^herald http on \([^ ]*\)$/\1/p' "$out/server.stderr" "$out/server.stdout" | head -n1)"
    [ -n "$native" ] && [ -n "$http" ] && break
    if ! running "$server_pid"; then
        echo "soak: the server did not start:" >&2
        cat "$out/server.stderr" >&2
        exit 1
    fi
    sleep 0.1
done
if [ -z "$native" ] || [ -z "$http" ]; then
    echo "soak: the server printed no addresses within 30 s" >&2
    exit 1
fi
echo "soak: server pid $server_pid on $native (http $http), output in $out"

# The driver runs in the background and the script waits for it, so that a SIGTERM to the
# script runs the trap at once (bash defers traps until a foreground command ends).
PYTHONPATH="$repo/python:$repo/scripts/soak${PYTHONPATH:+:$PYTHONPATH}" "$python" \
    scripts/soak/soak.py --native "$native" --http "$http" --server-pid "$server_pid" \
    --server-log "$out/server.stderr" --server-bin "$binary" --minutes "$minutes" --out "$out" &
driver_pid=$!
status=0
wait "$driver_pid" || status=$?
driver_pid=""

stop_server && stop_ok=1 || stop_ok=0
# The same pattern as server_log_problems in scripts/soak/soak.py: change both together.
late="$(grep -cE '^\S+\s+ERROR\b|panic' "$out/server.stderr" || true)"
{
    echo "Server stop: $stop_message"
    echo "Server stderr after the stop: $late ERROR/panic lines"
    env | grep '^HERALD_' | sed 's/^/HERALD variable in effect: /' || true
} | tee -a "$out/summary.txt"
if [ "$status" = 0 ] && { [ "$stop_ok" = 0 ] || [ "$late" != 0 ]; }; then
    status=1
    echo "[FAIL] the server did not stop cleanly" | tee -a "$out/summary.txt"
fi

echo
if [ "$status" = 0 ]; then
    echo "soak: PASS; results in $out"
else
    echo "soak: FAIL (status $status); results in $out"
fi
echo "  $out/summary.txt  $out/samples.csv  $out/soak.png  $out/server.stderr"
exit "$status"
