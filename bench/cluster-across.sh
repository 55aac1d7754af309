#!/usr/bin/env bash
# Delivery across a route: `herald bench pubsub` (1→1) and `fanout` (1→10), the publisher on
# member 1 and the subscribers on member 2 of a 2-member cluster on loopback
# (scripts/cluster.sh), against the same on a single server; ROUNDS rounds, the order
# alternating, fresh servers per run, default configuration.
#
#   bash bench/cluster-across.sh           # N=1000000 records, ROUNDS=4
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-4}
N=${N:-1000000}
source bench/lib.sh
export CLUSTER_SH_DIR=$W/cluster CLUSTER_SH_BIN=$H
SINGLE=""
cleanup() { [ -n "$SINGLE" ] && kill -9 "$SINGLE" 2>/dev/null; bash scripts/cluster.sh stop >/dev/null 2>&1 || true; rm -rf "$W"; }
trap cleanup EXIT
run() { # label scenario url [subscriber url]
  local extra=()
  [ -n "${4:-}" ] && extra=(--subscriber-server "$4")
  "$H" bench "$2" -n "$N" --server "$3" "${extra[@]}" --json 2>/dev/null |
    labelled "$1" "$2"
}
single() { # scenario
  "$H" serve --data-dir "$W/single" --listen 127.0.0.1:17860 --http 127.0.0.1:17861 --log-level warn 2>/dev/null &
  SINGLE=$!; sleep 1
  run single "$1" "herald://127.0.0.1:17860"
  kill -9 "$SINGLE"; wait "$SINGLE" 2>/dev/null || true; SINGLE=""; rm -rf "$W/single"
}
across() { # scenario
  bash scripts/cluster.sh start 2 >/dev/null
  sleep 1
  local url first second
  url=$(sed 's|herald://||' < "$W/cluster/url")
  first=${url%%,*}; second=${url##*,}
  run across "$1" "herald://$first" "herald://$second"
  bash scripts/cluster.sh stop >/dev/null
}
for round in $(seq 1 "$ROUNDS"); do
  for scenario in pubsub fanout; do
    if [ $((round % 2)) = 1 ]; then single $scenario; across $scenario; else across $scenario; single $scenario; fi
  done
done
