#!/usr/bin/env bash
# The default configuration's archive against the alternatives, one store after the other:
# for each backend given (embedded = the block store, sqlite, none), one release
# `herald serve`, a warm-up of 500,000 records, then RUNS runs of `herald bench pub`
# (N records of 128 B) and per run the records/s, the server's CPU seconds per million
# records (/proc/PID/stat), its RSS and its data directory's size.
#   bash bench/archive-backends.sh [embedded sqlite none]     (N=2000000 RUNS=3 by default)
# Stops its servers by PID and removes its scratch directories.
set -euo pipefail
cd "$(dirname "$0")/.."
records="${N:-2000000}"
runs="${RUNS:-3}"
backends=("$@")
[[ ${#backends[@]} -gt 0 ]] || backends=(embedded sqlite none)
source bench/lib.sh
server=""
trap '[[ -n "$server" ]] && kill "$server" 2>/dev/null; rm -rf "$W"' EXIT
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
echo "machine: $(nproc) cores, $(uname -r), $(date -u +%FT%TZ); $records records of 128 B per run"
for backend in "${backends[@]}"; do
  data="$W/$backend"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  HERALD_ARCHIVE_BACKEND=$backend "$H" serve --listen "127.0.0.1:$port" --http 127.0.0.1:0 \
    --data-dir "$data" >"$W/$backend.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "$H" bench pub --server "herald://127.0.0.1:$port" -n 500000 >/dev/null
  for run in $(seq "$runs"); do
    before=$(cpu "$server")
    rate=$("$H" bench pub --server "herald://127.0.0.1:$port" -n "$records" | grep -v '^{' |
      grep -o '[0-9]* msg/s')
    sleep 1 # the archive finishes what it holds
    after=$(cpu "$server")
    rss=$(awk '/VmRSS/ {printf "%.0f MiB", $2 / 1024}' "/proc/$server/status")
    disk=$(du -sm "$data" | cut -f1)
    python3 -c "print(f'$backend run $run: $rate, server CPU {($after - $before) / $ticks / ($records / 1e6):.2f} s per million records, RSS $rss, data directory $disk MB')"
  done
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
done
