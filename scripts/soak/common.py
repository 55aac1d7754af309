"""What the soak's processes share: the load's plan (subjects, priorities, filters, info
objects), glob matching as the server does it, and the result file every worker writes."""

from __future__ import annotations

import base64
import json
import os
import re
import threading
import time
import traceback
import zlib
from array import array
from typing import Any, Dict, Iterable, List, Optional

from herald import Priority, PrioritySet

# ---- producers -----------------------------------------------------------------------------

COMPONENTS = ("mount", "rx", "corr", "wx")
# Per mille of each priority in the producers' records (sums to 1000): every priority of the
# ten appears, the low ones most.
PRIORITY_WEIGHTS = [
    (Priority.TRACE, 150),
    (Priority.DELOUSE, 50),
    (Priority.DEBUG, 200),
    (Priority.INFO, 250),
    (Priority.NOTICE, 120),
    (Priority.WARNING, 100),
    (Priority.ERROR, 60),
    (Priority.CRITICAL, 40),
    (Priority.ALERT, 20),
    (Priority.EMERGENCY, 10),
]
PRIORITY_TABLE: List[Priority] = [p for p, weight in PRIORITY_WEIGHTS for _ in range(weight)]


def producer_subjects(producer: int) -> List[str]:
    return [f"SOAK.log.{component}.p{producer}" for component in COMPONENTS]


# ---- subscriptions -------------------------------------------------------------------------

ALL = [p for p, _ in PRIORITY_WEIGHTS]

# The filters the coming-and-going log subscribers take in turn: (subject glob, priorities).
CHURN_FILTERS = [
    ("SOAK.log.*", PrioritySet.at_least(Priority.WARNING).priorities()),
    ("SOAK.log.mount.*", ALL),
    ("SOAK.log.*.p2", [Priority.DEBUG, Priority.INFO, Priority.EMERGENCY]),
    ("SOAK.log.?x.*", [p for p in ALL if p <= Priority.NOTICE]),
    ("SOAK.log.corr.p?", ALL),
    ("SOAK.log.*", ALL),
]

# The selections the coming-and-going info subscribers take in turn: (name regex, type).
INFO_SELECTIONS = [
    (r"SOAK\.info\.mount\.0[0-4].*", None),
    (None, "SoakSensor"),
    (r"SOAK\.info\..*", None),
]

# Info objects: (name prefix, type, count).
MOUNTS = 200
SENSORS = 100
MOUNT_ATTRIBUTES = [
    ("az", "double", "azimuth, degrees"),
    ("el", "double", "elevation, degrees"),
    ("tracking", "bool", "on source"),
    ("mode", "string", "servo mode"),
]
SENSOR_ATTRIBUTES = [("value", "double", "reading"), ("unit", "string", "unit of the reading")]


def info_objects() -> List[tuple]:
    """Every info object of the soak as (name, type)."""
    mounts = [(f"SOAK.info.mount.{i:03d}", "SoakMount") for i in range(MOUNTS)]
    sensors = [(f"SOAK.info.sensor.{i:03d}", "SoakSensor") for i in range(SENSORS)]
    return mounts + sensors


def glob_regex(pattern: str) -> re.Pattern:
    """A subject glob as the server reads it: `*` any run, `?` one character, all else literal,
    matched against the whole subject."""
    parts = [".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern]
    return re.compile("".join(parts), re.DOTALL)


def selection_matches(regex: Optional[str], type_name: Optional[str], name: str, kind: str) -> bool:
    """An info selection (regex and/or exact type, combined with *and*) on one object."""
    if regex is not None and re.fullmatch(regex, name) is None:
        return False
    return type_name is None or type_name == kind


# ---- fences --------------------------------------------------------------------------------

# A fence is a log record a subscriber's own connection publishes (and flushes) right after
# subscribing and again before it leaves; the ledger gives each fence's sequence number, and
# the subscription's accounting window is the sequence numbers strictly between the two.
FENCE_FIELD = "fence"


# ---- results -------------------------------------------------------------------------------


class Result:
    """What a worker did, written as JSON when it ends: counts, errors and subscriptions."""

    def __init__(self, role: str, path: str) -> None:
        self.path = path
        self.data: Dict[str, Any] = {"role": role, "calls": 0, "errors": [], "subs": []}
        self.started = time.time()
        self.lock = threading.Lock()

    def call(self, count: int = 1) -> None:
        with self.lock:
            self.data["calls"] += count

    def error(self, what: str, err: Optional[BaseException] = None) -> None:
        why = "" if err is None else f": {type(err).__name__}: {err}"
        with self.lock:
            self.data["errors"].append(f"{time.strftime('%H:%M:%S')} {what}{why}")
            first = len(self.data["errors"]) <= 3
        if first and err is not None:
            traceback.print_exc()

    def add_sub(self, entry: Dict[str, Any]) -> None:
        with self.lock:
            self.data["subs"].append(entry)

    def write(self) -> None:
        self.data["seconds"] = round(time.time() - self.started, 3)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as out:
            json.dump(self.data, out)
        os.replace(tmp, self.path)


def load_json(path: str) -> Any:
    with open(path) as source:
        return json.load(source)


def pack_seqs(seqs: Iterable[int]) -> str:
    """Sequence numbers, sorted, as zlib-compressed deltas in base64 (compact in JSON)."""
    deltas = array("Q")
    last = 0
    for seq in sorted(seqs):
        deltas.append(seq - last)
        last = seq
    return base64.b64encode(zlib.compress(deltas.tobytes(), 6)).decode("ascii")


def unpack_seqs(packed: str) -> List[int]:
    deltas = array("Q")
    deltas.frombytes(zlib.decompress(base64.b64decode(packed)))
    seqs, total = [], 0
    for delta in deltas:
        total += delta
        seqs.append(total)
    return seqs


def item_hash(seq: int, source: Any, number: int) -> int:
    """One delivered record's contribution to a subscription's checksum: the ledger computes
    the same from what it saw under that sequence number, so the two agree only if every
    subscriber got, under each number, the record the ledger got."""
    return zlib.crc32(f"{seq}:{source}:{number}".encode())
