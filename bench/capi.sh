#!/usr/bin/env bash
# The C API beside the Rust client, against one server in its default configuration
# (embedded archive on): `herald bench pub` (Rust) and bench/capi/bench.c's `pub` (C,
# herald_publish of the same 128 B log record) in turns, three runs each, then the logger
# call: `herald bench logger` (Rust) and HERALD_LOG from 1, 2 and 8 threads (C) in turns,
# LOGGER_ROUNDS times (default 10), and the median of the C rounds' medians per thread count
# with how many rounds were over 150 ns (this 2-vCPU machine has slow spells, ~1.45x).
#   bash bench/capi.sh [RECORDS]      (default 1,000,000 per publish run)
# Prints each run; docs/benchmarks.md records the numbers. Stops its server by PID and
# removes its scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
records="${1:-1000000}"
cargo build --release -q -p herald-capi
source bench/lib.sh
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$W"' EXIT

# The program asks for the library by its SONAME, as an installed one is.
mkdir -p "$W/lib"
ln -sf "$PWD/target/release/libherald.so" "$W/lib/libherald.so.0"
gcc -O2 -std=c99 -Wall -Wextra -Werror -Icrates/herald-capi/include bench/capi/bench.c \
  -Ltarget/release -lherald -lpthread -Wl,-rpath,"$W/lib" -o "$W/capi-bench"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$H" serve --listen "127.0.0.1:$port" --http 127.0.0.1:0 --data-dir "$W/data" >"$W/server.log" 2>&1 &
server=$!
url="herald://127.0.0.1:$port"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

echo "machine: $(nproc) cores, $(uname -r), $(date -u +%FT%TZ)"
for run in 1 2 3; do
  echo "-- publish run $run"
  "$H" bench pub --server "$url" -n "$records" --size 128 | grep -v '^{'
  "$W/capi-bench" pub "$url" "$records" 128
done
rounds="${LOGGER_ROUNDS:-10}"
for run in $(seq "$rounds"); do
  echo "-- logger run $run"
  "$H" bench logger --server "$url" | grep -v '^{'
  "$W/capi-bench" logger "$url" | tee -a "$W/c-logger.txt"
done
python3 - "$W/c-logger.txt" <<'PY'
import re, statistics, sys
medians = {}
for line in open(sys.argv[1]):
    m = re.search(r"(\d+) threads: median (\d+) ns", line)
    if m:
        medians.setdefault(int(m.group(1)), []).append(int(m.group(2)))
for threads, values in sorted(medians.items()):
    over = sum(v >= 150 for v in values)
    print(f"C HERALD_LOG, {threads} threads: median of {len(values)} rounds' medians "
          f"{statistics.median(values):.0f} ns (lowest {min(values)}, highest {max(values)}); "
          f"{over} of {len(values)} rounds at 150 ns or more")
PY
