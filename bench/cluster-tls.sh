#!/usr/bin/env bash
# Delivery 1->1 across a route (`herald bench pubsub`, the publisher on member a, the
# subscriber on member b of a 2-member cluster on loopback): plain routes against TLS routes
# (`[cluster] tls`, development certificates), and, with BEFORE=<herald binary>, plain routes
# of that binary too. ROUNDS rounds, the order rotated, fresh servers per run.
#
#   bash bench/cluster-tls.sh                          # N=1000000 records, ROUNDS=3
#   BEFORE=/tmp/herald-before bash bench/cluster-tls.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
N=${N:-1000000}
source bench/lib.sh
A=""; B=""
cleanup() { for p in $A $B; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
"$H" cert dev "$W/certs" >/dev/null
run() { # label binary tls(0|1)
  local bin=$2 tls=() env=() scheme=herald query=""
  if [ "$3" = 1 ]; then
    tls=(--tls-cert "$W/certs/server.pem" --tls-key "$W/certs/server-key.pem")
    env=(HERALD_CLUSTER_TLS=true "HERALD_CLUSTER_CA=$W/certs/ca.pem")
    scheme=herald+tls; query="?ca=$W/certs/ca.pem"
  fi
  rm -rf "$W/a" "$W/b"
  env "${env[@]}" "$bin" serve --name a --data-dir "$W/a" --listen 127.0.0.1:17900 \
    --http 127.0.0.1:17980 --cluster bench --cluster-listen 127.0.0.1:17901 "${tls[@]}" \
    --log-level warn 2>/dev/null &
  A=$!; sleep 0.5
  env "${env[@]}" "$bin" serve --name b --data-dir "$W/b" --listen 127.0.0.1:17910 \
    --http 127.0.0.1:17990 --cluster bench --cluster-listen 127.0.0.1:17911 \
    --route herald://127.0.0.1:17901 "${tls[@]}" --log-level warn 2>/dev/null &
  B=$!; sleep 1.5
  "$H" bench pubsub -n "$N" --server "$scheme://127.0.0.1:17900$query" \
    --subscriber-server "$scheme://127.0.0.1:17910$query" --json 2>/dev/null | labelled "$1" pubsub
  kill "$A" "$B"; wait "$A" "$B" 2>/dev/null || true; A=""; B=""
}
ways=(plain tls)
[ -n "${BEFORE:-}" ] && ways=(before plain tls)
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!ways[@]}"; do
    way=${ways[$(((i + round) % ${#ways[@]}))]}
    case $way in
      before) run before "$BEFORE" 0 ;;
      plain) run plain "$H" 0 ;;
      tls) run tls "$H" 1 ;;
    esac
  done
done
