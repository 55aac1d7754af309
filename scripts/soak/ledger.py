"""The ledger and the accounting.

The ledger is one subscription to everything the soak publishes (`SOAK.*`, logs and info
changes) with every priority protected, so the server never sheds for it. It keeps, per
server sequence number, what was routed under it: class (producer record, info change,
fence), priority, subject, producer and per-producer number (or info version). At the end it
must hold every producer's records 0..sent-1 exactly once, every version of every info
object exactly once, every fence once, and have had no GAP: then it is the exact list of
what was routed, by sequence number, and each subscription is checked against it.

A subscription's window is the sequence numbers strictly between its two fences (published
and flushed by its own connection after its OK and before it leaves). Every record numbered
after the start fence was routed after the subscription existed, and every record numbered
before the end fence was routed while it still existed, so the records of the window that
pass its filter are exactly what the server owed it. A GAP notice gives how many records
were lost with the lowest and highest of their numbers; where a notice's range straddles a
window edge the edge moves inward past it, so every notice is wholly in or out; a window left
empty that way, or one that owed nothing, is a problem (it would check nothing). Then, per
priority: owed = delivered + lost in the notices inside, every owed record not delivered lies
in some notice's range, nothing else was delivered in the window, nothing twice, and the
checksum of (number, producer, n) over all that was delivered matches the ledger's."""

from __future__ import annotations

import threading
import time
from array import array
from bisect import bisect_right
from typing import Any, Dict, List, Optional, Set, Tuple

import herald
from common import (
    FENCE_FIELD,
    glob_regex,
    item_hash,
    pack_seqs,
    selection_matches,
    unpack_seqs,
)
from herald import DeliveryOptions, Kind, Priority, PrioritySet

PRODUCER, INFO, FENCE, OTHER = 1, 2, 3, 4
GROW = 1 << 16


class Ledger:
    def __init__(self, url: str) -> None:
        self.client = herald.connect(url, name="soak-ledger", reconnect_timeout=0)
        self.cls = bytearray()
        self.prio = bytearray()
        self.subj = array("H")
        self.source = array("H")
        self.number = array("I")
        self.subjects: List[str] = []
        self.types: List[str] = []
        self.subject_index: Dict[str, int] = {}
        self.fences: Dict[str, int] = {}
        self.seen: Dict[Tuple[int, int], bytearray] = {}  # (class, source) → bitmap of numbers
        self.anomalies: List[str] = []
        self.records = 0
        self.closing = False
        self.lock = threading.Lock()
        self.sub = self.client.subscribe(
            "SOAK.*",
            kinds=["log", "info"],
            options=DeliveryOptions(protected=Priority.TRACE),
        )
        self.thread = threading.Thread(target=self.run, name="ledger", daemon=True)
        self.thread.start()

    def anomaly(self, text: str) -> None:
        if len(self.anomalies) < 50:
            self.anomalies.append(text)

    def index(self, subject: str, kind: str) -> int:
        found = self.subject_index.get(subject)
        if found is None:
            found = self.subject_index[subject] = len(self.subjects)
            self.subjects.append(subject)
            self.types.append(kind)
        return found

    def run(self) -> None:
        for delivered in self.sub:
            with self.lock:
                self.add(delivered.seq, delivered.record)
        if not self.closing:
            self.anomaly("the ledger's subscription ended before the soak did")

    def add(self, seq: int, record: herald.Record) -> None:
        if seq >= len(self.cls):
            more = seq + GROW - len(self.cls)
            self.cls.extend(bytes(more))
            self.prio.extend(bytes(more))
            self.subj.extend([0] * more)
            self.source.extend([0] * more)
            self.number.extend([0] * more)
        if self.cls[seq]:
            self.anomaly(f"seq {seq} delivered twice to the ledger")
            return
        self.records += 1
        fields = record.fields
        if FENCE_FIELD in fields:
            cls, source, number = FENCE, 0, 0
            tag = fields[FENCE_FIELD]
            if tag in self.fences:
                self.anomaly(f"fence {tag} twice")
            self.fences[tag] = seq
        elif record.kind == Kind.LOG and "p" in fields and "n" in fields:
            cls, source, number = PRODUCER, int(fields["p"]), int(fields["n"])
        elif record.kind == Kind.INFO:
            cls, number = INFO, int(record.id or 0)
            source = self.index(record.subject, record.type)
        else:
            cls, source, number = OTHER, 0, 0
            self.anomaly(f"seq {seq}: unexpected record on {record.subject}")
        self.cls[seq] = cls
        self.prio[seq] = int(record.priority)
        self.subj[seq] = self.index(record.subject, record.type)
        self.source[seq] = source
        self.number[seq] = number
        if cls in (PRODUCER, INFO):
            bitmap = self.seen.setdefault((cls, source), bytearray())
            if number >= len(bitmap):
                bitmap.extend(bytes(number + 4096 - len(bitmap)))
            if bitmap[number]:
                self.anomaly(
                    f"{'producer' if cls == PRODUCER else 'object'} {source}: "
                    f"number {number} routed twice"
                )
            bitmap[number] = 1

    def wait_for_fence(self, tag: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if tag in self.fences:
                    return True
            time.sleep(0.1)
        return False

    def numbers(self, producer: int, priorities: PrioritySet) -> Set[int]:
        """The per-producer numbers `n` of `producer`'s records routed at `priorities`."""
        bits = priorities.bits
        with self.lock:
            cls, prio, source, number = self.cls, self.prio, self.source, self.number
            return {
                number[seq]
                for seq in range(len(cls))
                if cls[seq] == PRODUCER and source[seq] == producer and bits >> prio[seq] & 1
            }

    def close(self) -> None:
        self.closing = True
        self.client.close()

    # ---- the ledger's own check ------------------------------------------------------------

    def check_complete(
        self, sent: Dict[int, int], versions: Dict[str, int], fences: List[str]
    ) -> List[str]:
        """What keeps the ledger from being the exact list of what was routed (empty: none)."""
        problems = list(self.anomalies)
        if self.sub.lost or self.sub.gaps:
            problems.append(f"the ledger itself lost {self.sub.lost} records (GAP)")
        for producer, count in sorted(sent.items()):
            problems += missing(
                self.seen.get((PRODUCER, producer), bytearray()), 0, count, f"producer {producer}"
            )
        for name, last in sorted(versions.items()):
            index = self.subject_index.get(name, -1)
            problems += missing(
                self.seen.get((INFO, index), bytearray()), 1, last + 1, f"object {name} version"
            )
        problems += [f"fence {tag} never routed" for tag in fences if tag not in self.fences]
        return problems

    # ---- accounting ------------------------------------------------------------------------

    def matcher(self, entry: Dict[str, Any]) -> Tuple[int, bytearray, int]:
        """(class, per-subject-index 0/1 table, priority bits) of a subscription's filter."""
        table = bytearray(len(self.subjects))
        if entry["kind"] == "info":
            for i, (name, kind) in enumerate(zip(self.subjects, self.types)):
                table[i] = selection_matches(entry["regex"], entry["type"], name, kind)
            return INFO, table, 1 << int(Priority.INFO)
        pattern = glob_regex(entry["subject"])
        for i, name in enumerate(self.subjects):
            table[i] = pattern.fullmatch(name) is not None
        return PRODUCER, table, PrioritySet.of(entry["priorities"]).bits

    def account(self, entry: Dict[str, Any]) -> Dict[str, Any]:
        """Checks one subscription against the ledger; returns its numbers and problems."""
        out: Dict[str, Any] = {"tag": entry["tag"], "kind": entry["kind"], "problems": []}
        problems: List[str] = out["problems"]
        problems += entry.get("anomalies", [])
        lo, hi = self.fences.get(entry["start"]), self.fences.get(entry["end"])
        if lo is None or hi is None:
            problems.append("a fence is missing from the ledger: no window")
            return out
        gaps = [(g[0], g[1], g[2], {int(p): c for p, c in g[3].items()}) for g in entry["gaps"]]
        moved = True
        while moved:  # move each edge inward past any notice that straddles it
            moved = False
            for _, first, last, _ in gaps:
                if first <= lo < last:
                    lo, moved = last, True
                if first < hi <= last:
                    hi, moved = first, True
        if hi - lo <= 1:
            problems.append(
                f"empty window: its edges moved inward past the GAPs across them to {lo}..{hi}"
            )
        inside = [g for g in gaps if lo < g[1] and g[2] < hi]
        merged: List[List[int]] = []
        for first, last in sorted((g[1], g[2]) for g in inside):
            if merged and first <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        starts = [m[0] for m in merged]
        delivered = unpack_seqs(entry["seqs"])
        want, table, bits = self.matcher(entry)
        cls, prio, subj = self.cls, self.prio, self.subj
        owed, got, lost = [0] * 12, [0] * 12, [0] * 12
        checksum = 0
        for seq in delivered:
            if seq >= len(cls) or cls[seq] == 0:
                problems.append(f"seq {seq} delivered but the ledger has no such record")
                continue
            source = self.subjects[self.source[seq]] if cls[seq] == INFO else self.source[seq]
            checksum += item_hash(seq, source, self.number[seq])
            if lo < seq < hi:
                if cls[seq] != want or not table[subj[seq]] or not bits >> prio[seq] & 1:
                    problems.append(f"seq {seq} delivered but outside the filter")
                got[prio[seq]] += 1
        if checksum % (1 << 64) != entry["checksum"]:
            problems.append("checksum differs: some number came with another record")
        in_window = [s for s in delivered if lo < s < hi]
        k, uncovered = 0, 0
        for seq in range(lo + 1, max(lo + 1, hi)):
            if cls[seq] != want or not table[subj[seq]] or not bits >> prio[seq] & 1:
                continue
            owed[prio[seq]] += 1
            while k < len(in_window) and in_window[k] < seq:
                k += 1
            if k < len(in_window) and in_window[k] == seq:
                continue
            r = bisect_right(starts, seq) - 1
            if r < 0 or merged[r][1] < seq:
                uncovered += 1
                if uncovered <= 5:
                    problems.append(f"seq {seq} owed, neither delivered nor in a GAP range")
        for _, _, _, by_priority in inside:
            for p, count in by_priority.items():
                lost[p] += count
        for p in range(12):
            if owed[p] != got[p] + lost[p]:
                problems.append(
                    f"{Priority(p).name}: owed {owed[p]} != delivered {got[p]} + lost {lost[p]}"
                )
        if uncovered > 5:
            problems.append(f"... {uncovered} owed records in no GAP range in all")
        if not sum(owed) and hi - lo > 1:  # (an empty window is reported above)
            problems.append("owed nothing: the window checked nothing")
        if entry["kind"] == "info" and entry.get("snapshots") != entry.get("expected_snapshots"):
            problems.append(
                f"{entry.get('snapshots')} snapshots for {entry.get('expected_snapshots')} objects"
            )
        out.update(
            window=[lo, hi],
            owed=sum(owed),
            delivered=sum(got),
            lost=sum(lost),
            gaps=len(inside),
            gaps_outside=len(gaps) - len(inside),
            delivered_outside=len(delivered) - len(in_window),
            out_of_order=entry.get("out_of_order", 0),
            most_behind=entry.get("most_behind", 0),
            ended=entry.get("ended"),
        )
        return out


def missing(bitmap: bytearray, first: int, end: int, what: str) -> List[str]:
    """Problems if any number in [first, end) is absent from `bitmap` or any beyond is set."""
    absent = [n for n in range(first, end) if n >= len(bitmap) or not bitmap[n]]
    extra = [n for n in range(end, len(bitmap)) if bitmap[n]]
    problems = []
    if absent:
        problems.append(f"{what}s never routed: {len(absent)} (first {absent[:5]})")
    if extra:
        problems.append(f"{what}s routed beyond the last sent: {len(extra)} (first {extra[:5]})")
    return problems


def publish_fence(url: str, tag: str) -> Optional[str]:
    """Publishes one fence from a connection of its own; returns an error text or None."""
    try:
        with herald.connect(url, name="soak-fence", reconnect_timeout=0) as client:
            client.log(Priority.EMERGENCY, "SOAK.fence.driver", "fence", **{FENCE_FIELD: tag})
            client.flush(timeout=30)
    except herald.HeraldError as err:
        return f"fence {tag}: {err}"
    return None


def self_test(ledger: Ledger, subs: List[Dict[str, Any]]) -> bool:
    """Takes one delivered record out of the busiest subscription's list (and out of its
    checksum) and makes sure the accounting then reports it."""
    entry = max(subs, key=lambda s: s.get("delivered", 0))
    lo, hi = ledger.fences[entry["start"]], ledger.fences[entry["end"]]
    seqs = unpack_seqs(entry["seqs"])
    inside = [s for s in seqs if lo < s < hi]
    if not inside:
        return False
    gone = inside[len(inside) // 2]
    source = ledger.source[gone]
    if ledger.cls[gone] == INFO:
        source = ledger.subjects[source]
    checksum = (entry["checksum"] - item_hash(gone, source, ledger.number[gone])) % (1 << 64)
    changed = dict(entry, seqs=pack_seqs(s for s in seqs if s != gone), checksum=checksum)
    return ledger.account(changed)["problems"] != ledger.account(entry)["problems"]
