#!/usr/bin/env bash
# What idle routes cost the publisher: `herald bench pub` against a single server and against
# member 1 of a 3-member cluster on loopback (scripts/cluster.sh) with no subscriber anywhere,
# ROUNDS rounds, the order alternating, fresh servers per run, default configuration.
#
#   bash bench/cluster-idle.sh            # N=2000000 records, ROUNDS=6
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-6}
N=${N:-2000000}
source bench/lib.sh
export CLUSTER_SH_DIR=$W/cluster CLUSTER_SH_BIN=$H
SINGLE=""
cleanup() { [ -n "$SINGLE" ] && kill "$SINGLE" 2>/dev/null; bash scripts/cluster.sh stop >/dev/null 2>&1 || true; rm -rf "$W"; }
trap cleanup EXIT
run() { "$H" bench pub -n "$N" --server "$2" --json 2>/dev/null | labelled "$1" pub; }
single() {
  "$H" serve --data-dir "$W/single" --listen 127.0.0.1:17850 --http 127.0.0.1:17851 --log-level warn 2>/dev/null &
  SINGLE=$!; sleep 1
  run single "herald://127.0.0.1:17850"
  kill -9 "$SINGLE"; wait "$SINGLE" 2>/dev/null || true; SINGLE=""; rm -rf "$W/single"
}
cluster() {
  bash scripts/cluster.sh start 3 >/dev/null
  sleep 1
  run cluster "$(cut -d, -f1 < "$W/cluster/url")"
  bash scripts/cluster.sh stop >/dev/null
}
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then single; cluster; else cluster; single; fi
done
