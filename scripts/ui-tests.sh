#!/usr/bin/env bash
# Runs the browser UI tests (tests/ui): installs what they need (scripts/ui-test-deps.sh for
# Chromium, scripts/ui-firefox-deps.sh for the Firefox smoke test), builds the herald binary
# when it is missing or older than the sources, then runs pytest.
# Extra arguments go to pytest, e.g. `--doc-screenshots` or `-k chart`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ui-test-deps.sh
bash scripts/ui-firefox-deps.sh

target="${CARGO_TARGET_DIR:-target}"
binary="$target/debug/herald"
newer=""
if [ -x "$binary" ]; then
    newer="$(find crates Cargo.toml Cargo.lock -newer "$binary" -type f -print -quit)"
fi
if [ ! -x "$binary" ] || [ -n "$newer" ]; then
    cargo build -p herald-cli --locked
fi

# Firefox was just installed: a missing one fails the smoke test instead of skipping it
# pytest's temporary directories are kept only for failed tests.
UI_TEST_REQUIRE_FIREFOX=1 UI_TEST_HERALD="$binary" python3 -m pytest -q \
  -o tmp_path_retention_policy=failed tests/ui "$@"
