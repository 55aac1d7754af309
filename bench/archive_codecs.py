"""Block compression for the archive, measured on what a facility sends (issue 19).

    python3 bench/archive_codecs.py collect URL SECONDS FILE   records from a server, raw
    python3 bench/archive_codecs.py measure FILE               bytes per record and speed

`collect` subscribes to everything on URL (bench/archive-codecs.sh points it at a server
running `--demo`: logs with storms, 220 information objects at 1 Hz, run-control messages)
and keeps each record's wire encoding. `measure` cuts the records, in arrival order, into
blocks of 64 and 256 KiB per archive table (logs; samples: info and messages; both mixed)
and compresses each block with lz4, lz4 HC 9 and zstd 1, 3 and 9 (pip: lz4, zstandard),
printing bytes per record after compression and compression speed (MB/s of raw bytes, one
thread, best of three). Needs the Python client on sys.path (python/).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import herald  # noqa: E402
from herald import Record  # noqa: E402


def collect(url: str, seconds: float, path: str) -> None:
    count = 0
    with open(path, "wb") as out, herald.connect(url, name="archive-codecs") as client:
        with client.subscribe("*") as sub:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                delivered = sub.next(timeout=1.0)
                record = getattr(delivered, "record", None)
                if record is None:
                    continue
                encoded = record.to_bytes()
                out.write(len(encoded).to_bytes(4, "little") + encoded)
                count += 1
    print(f"collected {count} records in {seconds:.0f} s")


def load(path: str) -> List[bytes]:
    data = Path(path).read_bytes()
    records, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "little")
        records.append(data[at + 4 : at + 4 + size])
        at += 4 + size
    return records


def blocks(records: List[bytes], size: int) -> List[Tuple[bytes, int]]:
    out, current, count = [], bytearray(), 0
    for record in records:
        current += record
        count += 1
        if len(current) >= size:
            out.append((bytes(current), count))
            current, count = bytearray(), 0
    if current:
        out.append((bytes(current), count))
    return out


def measure(path: str) -> None:
    import lz4.block
    import zstandard

    records = load(path)
    kinds = [Record.from_bytes(r).kind.value for r in records]
    tables = {
        "logs": [r for r, k in zip(records, kinds) if k == 0],
        "samples": [r for r, k in zip(records, kinds) if k != 0],
        "mixed": records,
    }
    codecs: Dict[str, Callable[[bytes], bytes]] = {
        "lz4": lambda b: lz4.block.compress(b, store_size=False),
        "lz4 HC 9": lambda b: lz4.block.compress(
            b, mode="high_compression", compression=9, store_size=False
        ),
        "zstd 1": zstandard.ZstdCompressor(level=1).compress,
        "zstd 3": zstandard.ZstdCompressor(level=3).compress,
        "zstd 9": zstandard.ZstdCompressor(level=9).compress,
    }
    print(f"{len(records)} records, {sum(map(len, records)) / len(records):.1f} B each")
    header = " | ".join(f"{name}: B/rec (MB/s)" for name in codecs)
    print(f"| block | table | records | raw B/rec | {header} |")
    print("|---" * (4 + len(codecs)) + "|")
    for size in (65536, 262144):
        for table, rows in tables.items():
            cut = blocks(rows, size)
            count = sum(n for _, n in cut)
            raw = sum(len(b) for b, _ in cut)
            cells = []
            for compress in codecs.values():
                best = float("inf")
                for _ in range(3):
                    start = time.perf_counter()
                    packed = sum(len(compress(b)) for b, _ in cut)
                    best = min(best, time.perf_counter() - start)
                cells.append(f"{packed / count:.1f} ({raw / best / 1e6:.0f})")
            print(
                f"| {size // 1024} KiB | {table} | {count} | {raw / count:.1f} | "
                + " | ".join(cells)
                + " |"
            )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "collect":
        collect(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "measure":
        measure(sys.argv[2])
    else:
        sys.exit(__doc__)
