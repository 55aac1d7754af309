#!/usr/bin/env bash
# Installs what the browser UI tests need, only what is missing: Debian's Chromium and the
# Python packages playwright, msgpack and pytest. Idempotent; runs unattended (CI, root, no
# stdin). Playwright drives /usr/bin/chromium: `playwright install` (a browser download) is
# never run.
set -euo pipefail

as_root=""
if [ "$(id -u)" != 0 ]; then as_root="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
apt_updated=""
apt_install() {
    if [ -z "$apt_updated" ]; then
        $as_root apt-get update -qq
        apt_updated=1
    fi
    $as_root apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x /usr/bin/chromium ]; then
    apt_install chromium
fi

missing=()
for module in playwright msgpack pytest; do
    python3 -c "import $module" >/dev/null 2>&1 || missing+=("$module")
done
if [ ${#missing[@]} -gt 0 ]; then
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    pip_install=(python3 -m pip install -q --disable-pip-version-check)
    # Debian's own Python refuses pip installs (PEP 668) unless told otherwise.
    "${pip_install[@]}" "${missing[@]}" 2>/dev/null ||
        "${pip_install[@]}" --break-system-packages "${missing[@]}"
fi
/usr/bin/chromium --version 2>/dev/null
