#!/usr/bin/env bash
# Installs what the browser UI tests need, only what is missing: Debian's Chromium and the
# Python packages playwright, msgpack and pytest. Idempotent; runs unattended (CI, root, no stdin).
# Playwright drives /usr/bin/chromium: `playwright install` (a browser download) is never run.
set -euo pipefail

if ! command -v chromium >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq chromium >/dev/null
fi

missing=()
for module in playwright msgpack pytest; do
    python3 -c "import $module" >/dev/null 2>&1 || missing+=("$module")
done
if [ ${#missing[@]} -gt 0 ]; then
    python3 -m pip install -q --disable-pip-version-check "${missing[@]}"
fi
chromium --version
