#!/usr/bin/env bash
# What identities, permissions and TLS cost, with `herald bench` against external servers.
#
#   bash bench/security.sh ways         # open, identity, TLS, TLS + identity: a server each
#   bash bench/security.sh permissions  # one server, an unrestricted and a restricted token
#
# `ways`: for each of ROUNDS rounds, `pub` then `pubsub` through four servers in turn — open
# over plain TCP, an identity with restricted globs (`--publish 'bench.*' --subscribe
# 'bench.*'`: every record checked, the subscription narrowed), TLS (open), TLS with that
# identity — the order rotated each round, a fresh data directory and server per run.
# `permissions`: one server with identities; PAIRS pairs of runs adjacent in time (the order
# inside a pair alternating), with the token of `all` (`--publish '*'`: no check per record)
# and of `bench` (restricted as above).
# ARCHIVE=embedded (the default configuration) or none; N records per run. Prints one JSON
# line per run, prefixed by the way and the scenario; results go to target/bench-security/.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-ways}
ROUNDS=${ROUNDS:-8}
PAIRS=${PAIRS:-12}
N=${N:-2000000}
ARCHIVE=${ARCHIVE:-embedded}
source bench/lib.sh
OUT=target/bench-security
mkdir -p "$OUT"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT

"$H" cert dev "$W/certs" >/dev/null
CA=$W/certs/ca.pem
TOKEN=$("$H" token new bench --identities "$W/ids.toml" --publish 'bench.*' --subscribe 'bench.*' 2>/dev/null)
ALL=$("$H" token new all --identities "$W/ids.toml" --publish '*' --subscribe '*' 2>/dev/null)

start() { # identities(ids|-) tls(tls|-)
  local args=(serve --data-dir "$W/data" --listen 127.0.0.1:17800 --http 127.0.0.1:17801 --log-level warn)
  [ "$1" = ids ] && args+=(--identities "$W/ids.toml")
  [ "$2" = tls ] && args+=(--tls-cert "$W/certs/server.pem" --tls-key "$W/certs/server-key.pem")
  HERALD_ARCHIVE_BACKEND=$ARCHIVE "$H" "${args[@]}" 2>>"$OUT/serve.log" &
  SERVER=$!
  sleep 1
}
stop() { kill -9 "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; SERVER=""; rm -rf "$W/data"; }
run() { # label scenario url
  "$H" bench "$2" -n "$N" --server "$3" --json 2>/dev/null |
    labelled "$1" "$2" | tee -a "$OUT/$MODE-$ARCHIVE.jsonl"
}

case $MODE in
  ways)
    ways=(open identity tls tls+identity)
    for round in $(seq 0 $((ROUNDS - 1))); do
      for scenario in pub pubsub; do
        for k in 0 1 2 3; do
          way=${ways[$(((round + k) % 4))]}
          case $way in
            open) start - -; url="herald://127.0.0.1:17800" ;;
            identity) start ids -; url="herald://127.0.0.1:17800?token=$TOKEN" ;;
            tls) start - tls; url="herald+tls://localhost:17800?ca=$CA" ;;
            tls+identity) start ids tls; url="herald+tls://localhost:17800?ca=$CA&token=$TOKEN" ;;
          esac
          run "$way" "$scenario" "$url"
          stop
        done
      done
    done
    ;;
  permissions)
    start ids -
    for i in $(seq 1 "$PAIRS"); do
      for scenario in pub pubsub; do
        first=(all "$ALL") second=(restricted "$TOKEN")
        if [ $((i % 2)) = 1 ]; then first=(restricted "$TOKEN") second=(all "$ALL"); fi
        run "${first[0]}" "$scenario" "herald://127.0.0.1:17800?token=${first[1]}"
        run "${second[0]}" "$scenario" "herald://127.0.0.1:17800?token=${second[1]}"
      done
    done
    stop
    ;;
  *) echo "usage: bash bench/security.sh ways|permissions" >&2; exit 2 ;;
esac
