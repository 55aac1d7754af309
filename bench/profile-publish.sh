#!/usr/bin/env bash
# Where the server's time goes while it takes records: one `herald serve` (release), one
# `herald bench pub` run (N records of 128 B) while perf samples the server, then
#   - records/s and the server's CPU seconds per million records,
#   - the share of the server's CPU each thread took, and the archive thread's big parts,
#   - a flame graph (SVG, inferno) of the server.
# For the archive's "before and after" (issue 19).
#   ARCHIVE=embedded|sqlite|none bash bench/profile-publish.sh OUT.svg [N]
# FOLDED=FILE keeps the folded stacks (inferno-collapse-perf's output) for other views.
# Needs perf (linux-perf) and inferno (`cargo install inferno --locked`); installs them when
# missing. Stops its server by PID and removes its scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: ARCHIVE=embedded|none bash bench/profile-publish.sh OUT.svg [N]}"
records="${2:-3000000}"
archive="${ARCHIVE:-embedded}"
command -v perf >/dev/null || { apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null; }
command -v inferno-flamegraph >/dev/null || cargo install inferno --locked --quiet
source bench/lib.sh
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$W"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HERALD_ARCHIVE_BACKEND=$archive "$H" serve --listen "127.0.0.1:$port" --http 127.0.0.1:0 \
  --data-dir "$W/data" >"$W/server.log" 2>&1 &
server=$!
url="herald://127.0.0.1:$port"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
"$H" bench pub --server "$url" -n 500000 >/dev/null # warm up: files made, pages touched

cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
ticks=$(getconf CLK_TCK)
before=$(cpu)
perf record -F 999 -g --call-graph dwarf,16384 -p "$server" -o "$W/perf.data" >/dev/null 2>&1 &
perf=$!
sleep 0.3
"$H" bench pub --server "$url" -n "$records" | grep -v '^{'
sleep 0.5
after=$(cpu)
kill -INT "$perf"
wait "$perf" 2>/dev/null || true
python3 -c "print(f'server CPU: {($after - $before) / $ticks:.2f} s, {($after - $before) / $ticks / ($records / 1e6):.2f} s per million records (archive: $archive)')"

perf script -i "$W/perf.data" 2>/dev/null | inferno-collapse-perf 2>/dev/null |
  sed -E 's/::h[0-9a-f]{16}//g' >"$W/folded.txt"
python3 - "$W/folded.txt" <<'PY'
import collections, sys
total, threads, parts = 0, collections.Counter(), collections.Counter()
marks = {"SQLite (sqlite3*)": "sqlite3", "pwrite (the WAL and spill files)": "pwrite", "fsync/fdatasync": "fsync"}
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    n = int(n)
    total += n
    frames = stack.split(";")
    threads[frames[0]] += n
    if frames[0] == "herald-archive":
        for label, mark in marks.items():
            if any(mark in f for f in frames[1:]):
                parts[label] += n
for name, n in threads.most_common(6):
    print(f"  {100 * n / total:5.1f} %  thread {name}")
for label, n in parts.items():
    print(f"  {100 * n / total:5.1f} %    archive thread in {label}")
PY
inferno-flamegraph --width 1400 --minwidth 3 \
  --title "herald serve (archive: $archive) under herald bench pub, $records x 128 B" \
  "$W/folded.txt" >"$out" 2>/dev/null
[ -n "${FOLDED:-}" ] && cp "$W/folded.txt" "$FOLDED"
echo "flame graph: $out"
