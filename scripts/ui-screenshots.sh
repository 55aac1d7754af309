#!/usr/bin/env bash
# Writes docs/screenshots/{logs,info,charts,server}.png (1200x750) for the README: the UI tests
# run with realistic traffic and save one screenshot per view. Pillow, when installed, shrinks
# them to a 256-colour palette.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import PIL" >/dev/null 2>&1 || python3 -m pip install -q --disable-pip-version-check pillow
bash scripts/ui-tests.sh --doc-screenshots "$@"
ls -l docs/screenshots/
