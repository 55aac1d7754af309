#!/usr/bin/env bash
# Installs what the Firefox smoke test (tests/ui/test_firefox.py) needs, only what is missing:
# Debian's firefox-esr, geckodriver built from crates.io (cached in
# ~/.cache/herald/geckodriver/bin: a build of a few minutes once, then reused) and the Python
# package selenium. Idempotent; runs unattended (CI, root, no stdin). Only apt, crates.io and
# PyPI are used: neither Playwright's Firefox nor Selenium Manager downloads anything.
set -euo pipefail

GECKODRIVER_VERSION="${GECKODRIVER_VERSION:-0.37.1}"
gecko_root="$HOME/.cache/herald/geckodriver"
geckodriver="$gecko_root/bin/geckodriver"

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

if [ ! -x /usr/bin/firefox-esr ]; then
    apt_install firefox-esr
fi

# The version is read whole before it is matched: a pipe closed early (grep -q, head) makes
# geckodriver panic on a broken pipe, and pipefail turns that into a failure.
gecko_version() { "$geckodriver" --version 2>/dev/null || true; }

if [ -n "${UI_TEST_GECKODRIVER:-}" ]; then
    geckodriver="$UI_TEST_GECKODRIVER"
elif [[ "$(gecko_version)" != "geckodriver $GECKODRIVER_VERSION"* ]]; then
    build_dir="$(mktemp -d)"
    trap 'rm -rf "$build_dir"' EXIT
    echo "building geckodriver $GECKODRIVER_VERSION from crates.io (once, a few minutes)" >&2
    CARGO_TARGET_DIR="$build_dir" cargo install geckodriver --version "$GECKODRIVER_VERSION" \
        --locked --force --quiet --root "$gecko_root"
fi

if ! python3 -c "import selenium" >/dev/null 2>&1; then
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    pip_install=(python3 -m pip install -q --disable-pip-version-check)
    # Debian's own Python refuses pip installs (PEP 668) unless told otherwise.
    "${pip_install[@]}" selenium 2>/dev/null ||
        "${pip_install[@]}" --break-system-packages selenium
fi
/usr/bin/firefox-esr --version 2>/dev/null
version="$("$geckodriver" --version)"
echo "${version%%$'\n'*}"
