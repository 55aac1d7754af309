#!/usr/bin/env bash
# Generates crates/herald-capi/include/herald.h from the crate with cbindgen.
#   scripts/capi-header.sh          write the header
#   scripts/capi-header.sh --check  fail (and show the difference) if the committed header
#                                   is not what cbindgen makes
# cbindgen: `cargo install cbindgen --locked` (.ci/run installs it).
set -euo pipefail
cd "$(dirname "$0")/../crates/herald-capi"
if ! command -v cbindgen >/dev/null; then
  echo "capi-header: cbindgen is not installed (cargo install cbindgen --locked)" >&2
  exit 2
fi
if [[ "${1:-}" == "--check" ]]; then
  made=$(mktemp)
  trap 'rm -f "$made"' EXIT
  cbindgen --quiet --config cbindgen.toml --crate herald-capi --output "$made"
  if ! diff -u include/herald.h "$made"; then
    echo "capi-header: include/herald.h is not what cbindgen makes from the crate; run scripts/capi-header.sh and commit it" >&2
    exit 1
  fi
else
  cbindgen --quiet --config cbindgen.toml --crate herald-capi --output include/herald.h
  echo "capi-header: wrote crates/herald-capi/include/herald.h"
fi
