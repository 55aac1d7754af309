#!/usr/bin/env bash
# Embedded storage engines for Herald's archive, side by side on this machine: SQLite
# (rusqlite, bundled), fjall 2.x and redb 2.x, on the archive's layout (records keyed by
# (name, time, seq), one partition per day). The workload is in bench/engines/src/main.rs.
#
#   bash bench/engines.sh                  # clean per-engine builds (timed), then 3 rounds
#   ROUNDS=1 BUILD_TIMES=0 bash bench/engines.sh   # one round, no build timing
#   HERALD_BENCH_SQLITE_PRAGMAS="cache_size=-65536" ...  # side experiments with SQLite pragmas
#
# bench/engines is its own Cargo project (not in the workspace). Everything is built in
# target/engines (CARGO_TARGET_DIR); the stores live in target/engines/data while a run lasts
# (about 1.2 GiB at most) and are removed after it. Each round runs the three engines one
# after another, each in a fresh process; the table shows the median of the rounds. The
# output is also kept in target/engines/engines-<time>.md.
set -euo pipefail
cd "$(dirname "$0")/.."

COMMAND="${ROUNDS:+ROUNDS=$ROUNDS }${BUILD_TIMES:+BUILD_TIMES=$BUILD_TIMES }bash bench/engines.sh"
ROUNDS=${ROUNDS:-3}
BUILD_TIMES=${BUILD_TIMES:-1}
export CARGO_TARGET_DIR="$PWD/target/engines"
MANIFEST=bench/engines/Cargo.toml
mkdir -p "$CARGO_TARGET_DIR"
OUT="$CARGO_TARGET_DIR/engines-$(date -u +%Y%m%dT%H%M%SZ).md"

step() { printf '\n==> %s\n' "$*" >&2; }

{
  echo "command: $COMMAND"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "filesystem of target/engines: $(df -T "$CARGO_TARGET_DIR" | awk 'NR==2 {print $2}')"
  echo "toolchain: $(rustc --version)"
  echo
} | tee "$OUT"

build_times=""
if [[ $BUILD_TIMES == 1 ]]; then
  for engine in sqlite fjall redb; do
    dir="$CARGO_TARGET_DIR/build-$engine"
    rm -rf "$dir"
    step "clean release build with only the \`$engine\` feature (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    start=$(date +%s.%N)
    CARGO_TARGET_DIR="$dir" cargo build --release --locked --quiet \
      --manifest-path "$MANIFEST" --no-default-features --features "$engine"
    end=$(date +%s.%N)
    seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    echo "   $seconds s" >&2
    build_times+="$engine=$seconds,"
    rm -rf "$dir"
  done
fi

step "release build with all three engines"
cargo build --release --locked --manifest-path "$MANIFEST"

step "$ROUNDS round(s) of sqlite, fjall and redb"
"$CARGO_TARGET_DIR/release/herald-engines-bench" all --rounds "$ROUNDS" \
  --dir "$CARGO_TARGET_DIR/data" --build-times "$build_times" | tee -a "$OUT"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT"
echo "kept in ${OUT#"$PWD"/}" >&2
