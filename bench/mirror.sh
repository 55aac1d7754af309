#!/usr/bin/env bash
# What a one-way mirror adds to latency: `herald bench latency`, paced at RATE records/s,
# the publisher on a source server and the subscriber on the mirror it feeds (`[[mirror]]`,
# subjects "*"), against publisher and subscriber on the source alone; default
# configuration, release build, fresh servers per run.
#
#   bash bench/mirror.sh        # N=50000 records, RATE=10000; JSON lines on stdout
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-50000}
RATE=${RATE:-10000}
source bench/lib.sh
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
serve() { # name port http [config]
  local extra=()
  [ -n "${4:-}" ] && extra=(--config "$4")
  "$H" serve --name "$1" --data-dir "$W/$1" --listen "127.0.0.1:$2" --http "127.0.0.1:$3" \
    --log-level warn "${extra[@]}" 2>/dev/null &
  PIDS+=($!)
}
printf '[[mirror]]\nto = "herald://127.0.0.1:17881"\nsubjects = ["*"]\n' > "$W/source.toml"
serve public 17881 17891
sleep 1
serve control 17880 17890 "$W/source.toml"
sleep 2
"$H" bench latency -n "$N" --rate "$RATE" --server herald://127.0.0.1:17880 --json 2>/dev/null |
  labelled source latency
"$H" bench latency -n "$N" --rate "$RATE" --server herald://127.0.0.1:17880 \
  --subscriber-server herald://127.0.0.1:17881 --json 2>/dev/null | labelled mirror latency
