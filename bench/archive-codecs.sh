#!/usr/bin/env bash
# Block compression for the archive on a facility's records (issue 19): runs a server with
# `--demo` for SECONDS (default 150) while bench/archive_codecs.py keeps every record, then
# prints bytes per record and compression speed for lz4 and zstd on 64 and 256 KiB blocks,
# and the bytes per record the embedded archive (the block store) used for the same records.
#   bash bench/archive-codecs.sh [SECONDS]
# Installs the Python packages lz4 and zstandard with pip when missing. Stops its server by
# PID and removes its scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-150}"
python3 -c 'import lz4, zstandard' 2>/dev/null ||
  python3 -m pip install -q --disable-pip-version-check lz4 zstandard msgpack
source bench/lib.sh
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$W"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$H" serve --demo --listen "127.0.0.1:$port" --http 127.0.0.1:0 --data-dir "$W/data" \
  >"$W/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
python3 bench/archive_codecs.py collect "herald://127.0.0.1:$port" "$seconds" "$W/records.bin"
kill -TERM "$server"
wait "$server" 2>/dev/null || true
records=$(python3 -c "
import sys; sys.path.insert(0, 'bench'); import archive_codecs as a
print(len(a.load('$W/records.bin')))")
archive=$(du -sb "$W/data/segments" | cut -f1)
echo "the embedded archive (block store): $archive bytes on disk for about $records records" \
  "(the demo ran a few seconds longer than the collector): $((archive / records)) B per record"
python3 bench/archive_codecs.py measure "$W/records.bin"
