#!/usr/bin/env bash
# Two builds of herald side by side in one run, to measure what a change costs: `herald
# bench pub` and `pubsub` (1→1) against a single server, and `pubsub` across a 2-member
# cluster on loopback (scripts/cluster.sh); ROUNDS rounds, the builds' order alternating,
# fresh servers per run, default configuration. Each build drives its own server with its
# own `herald bench` (so a client-side change is measured too).
#
#   git worktree add /tmp/base <rev>
#   (cd /tmp/base && CARGO_TARGET_DIR=$PWD/target/base cargo build --release -p herald-cli)
#   BASE=target/base/release/herald bash bench/ab.sh      # NEW: this tree's release build
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-4}
N=${N:-1000000}
: "${BASE:?set BASE to the herald binary of the other build}"
BASE=$(realpath "$BASE")
source bench/lib.sh
NEW=${NEW:-$H}
SINGLE=""
cleanup() { [ -n "$SINGLE" ] && kill -9 "$SINGLE" 2>/dev/null; CLUSTER_SH_DIR=$W/cluster bash scripts/cluster.sh stop >/dev/null 2>&1 || true; rm -rf "$W"; }
trap cleanup EXIT
single() { # label binary scenario
  "$2" serve --data-dir "$W/single" --listen 127.0.0.1:17870 --http 127.0.0.1:17871 --log-level warn 2>/dev/null &
  SINGLE=$!; sleep 1
  "$2" bench "$3" -n "$N" --server herald://127.0.0.1:17870 --json 2>/dev/null | labelled "$1" "$3"
  kill -9 "$SINGLE"; wait "$SINGLE" 2>/dev/null || true; SINGLE=""; rm -rf "$W/single"
}
across() { # label binary
  CLUSTER_SH_DIR=$W/cluster CLUSTER_SH_BIN=$2 bash scripts/cluster.sh start 2 >/dev/null
  sleep 1
  local url first second
  url=$(sed 's|herald://||' < "$W/cluster/url")
  first=${url%%,*}; second=${url##*,}
  "$2" bench pubsub -n "$N" --server "herald://$first" --subscriber-server "herald://$second" --json 2>/dev/null |
    labelled "$1" across-pubsub
  CLUSTER_SH_DIR=$W/cluster bash scripts/cluster.sh stop >/dev/null
}
both() { # scenario function and its argument
  if [ $((round % 2)) = 1 ]; then "$1" base "$BASE" ${2:-}; "$1" new "$NEW" ${2:-}
  else "$1" new "$NEW" ${2:-}; "$1" base "$BASE" ${2:-}; fi
}
for round in $(seq 1 "$ROUNDS"); do
  both single pub
  both single pubsub
  both across
done
