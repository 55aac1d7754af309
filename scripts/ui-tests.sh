#!/usr/bin/env bash
# Runs the browser UI tests (tests/ui): installs what they need (scripts/ui-test-deps.sh),
# builds the herald binary when it is missing or older than the sources, then runs pytest.
# Extra arguments go to pytest, e.g. `--doc-screenshots` or `-k chart`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ui-test-deps.sh

target="${CARGO_TARGET_DIR:-target}"
binary="$target/debug/herald"
newer=""
if [ -x "$binary" ]; then
    newer="$(find crates Cargo.toml Cargo.lock -newer "$binary" -type f -print -quit)"
fi
if [ ! -x "$binary" ] || [ -n "$newer" ]; then
    cargo build -p herald-cli --locked
fi

UI_TEST_HERALD="$binary" python3 -m pytest -q tests/ui "$@"
