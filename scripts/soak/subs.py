"""The soak's subscribers. Each subscription keeps what the accounting needs: the sequence
numbers delivered, every GAP notice, the tags of its two fences, and checks of its own (each
record passes its filter, none comes twice, a checksum of what came under which number).

- Coming and going (threads of one process): subscribe (a log filter or an info selection
  from common.py, in turn), publish and flush a start fence, read promptly for 4-15 s,
  publish and flush an end fence, read 2 s more, then unsubscribe — or, one time in three,
  close the connection — and start again.
- Slow (raw sockets, here rather than the client library, whose reader never stops taking
  from the socket): a small receive buffer and reading at a fixed record rate, a fraction of
  what the filter matches, so the server's queue for it fills and GAP notices come."""

from __future__ import annotations

import random
import socket
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Set

import herald
from common import (
    CHURN_FILTERS,
    FENCE_FIELD,
    INFO_SELECTIONS,
    Result,
    glob_regex,
    info_objects,
    item_hash,
    pack_seqs,
    selection_matches,
)
from herald import DeliveryOptions, Filter, Kind, Policy, Priority, PrioritySet, Record
from herald.wire.frames import (
    AckLevel,
    Deliver,
    Error,
    FrameBuffer,
    Gap,
    Hello,
    Ok,
    Ping,
    Pong,
    Publish,
    Subscribe,
    Unsubscribe,
    Welcome,
    encode_frame,
)

GRACE = 2.0


def log(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


def gap_entry(gap: Gap) -> List[Any]:
    return [gap.count, gap.first_seq, gap.last_seq, {int(p): c for p, c in gap.by_priority}]


class Tally:
    """One subscription's deliveries: checked and summed as they come."""

    def __init__(self, accepts: Any) -> None:
        self.accepts = accepts  # record → error text or None
        self.seqs: Set[int] = set()
        self.checksum = 0
        self.anomalies: List[str] = []
        self.last = 0
        self.out_of_order = 0  # delivered after a record with a higher number
        self.most_behind = 0  # by how many numbers, at most

    def add(self, seq: int, record: Record) -> None:
        fields = record.fields
        if FENCE_FIELD in fields:
            return
        wrong = self.accepts(record)
        if wrong is None and seq in self.seqs:
            wrong = "delivered twice"
        if wrong is not None:
            if len(self.anomalies) < 20:
                self.anomalies.append(f"seq {seq} ({record.subject}): {wrong}")
            return
        self.seqs.add(seq)
        if seq < self.last:
            self.out_of_order += 1
            self.most_behind = max(self.most_behind, self.last - seq)
        self.last = max(self.last, seq)
        if record.kind == Kind.INFO:
            self.checksum += item_hash(seq, record.subject, record.id or 0)
        else:
            self.checksum += item_hash(seq, fields.get("p"), fields.get("n"))

    def entry(self, **more: Any) -> Dict[str, Any]:
        return dict(
            delivered=len(self.seqs),
            seqs=pack_seqs(self.seqs),
            checksum=self.checksum % (1 << 64),
            anomalies=self.anomalies,
            out_of_order=self.out_of_order,
            most_behind=self.most_behind,
            **more,
        )


def log_acceptor(subject: str, priorities: List[Priority]) -> Any:
    pattern, bits = glob_regex(subject), PrioritySet.of(priorities).bits

    def accepts(record: Record) -> Optional[str]:
        if record.kind != Kind.LOG:
            return f"kind {record.kind.name}"
        if not pattern.fullmatch(record.subject):
            return f"subject outside `{subject}`"
        if not bits >> int(record.priority) & 1:
            return f"priority {record.priority.name} outside the filter"
        if "p" not in record.fields or "n" not in record.fields:
            return "not a producer's record"
        return None

    return accepts


def fence(client: herald.Client, tag: str) -> None:
    """A fence: a log record naming `tag`, routed (flushed) before this returns."""
    client.log(Priority.INFO, "SOAK.fence.churn", "fence", **{FENCE_FIELD: tag})
    client.flush(timeout=30)


# ---- coming and going ----------------------------------------------------------------------


def churn(cfg: Dict[str, Any], j: int, info: bool, result: Result) -> None:
    rng = random.Random(1000 + j)
    client: Optional[herald.Client] = None
    cycle = 0
    # No turn starts in the last second of the load: the producers and the updater stop at the
    # deadline, and a window that owed nothing fails the accounting (ledger.py).
    while time.time() < cfg["deadline"] - 1.0:  # the last turn ends after the deadline
        tag = f"{'i' if info else 'c'}{j}.{cycle}"
        try:
            if client is None:
                client = herald.connect(cfg["url"], name=f"soak-churn-{tag}", reconnect_timeout=0)
                result.call()
            entry = churn_cycle(cfg, client, j + cycle, info, rng, tag, result)
            if entry.pop("disconnect"):
                client.close()
                client = None
            result.add_sub(entry)
        except (herald.HeraldError, OSError) as err:
            result.error(f"churn {tag}", err)
            if client is not None:
                client.close()
            client = None
            time.sleep(1.0)
        cycle += 1
    if client is not None:
        client.close()


def churn_cycle(
    cfg: Dict[str, Any],
    client: herald.Client,
    turn: int,
    info: bool,
    rng: random.Random,
    tag: str,
    result: Result,
) -> Dict[str, Any]:
    snapshots: Dict[str, int] = {}
    if info:
        regex, kind = INFO_SELECTIONS[turn % len(INFO_SELECTIONS)]
        spec: Dict[str, Any] = {"kind": "info", "regex": regex, "type": kind}
        expected_snapshots = sum(selection_matches(regex, kind, n, t) for n, t in info_objects())
        sub = client.subscribe_info(regex, kind)

        def accepts(record: Record) -> Optional[str]:
            if record.kind != Kind.INFO:
                return f"kind {record.kind.name}"
            if not selection_matches(regex, kind, record.subject, record.type):
                return "object outside the selection"
            return None

        tally = Tally(accepts)
    else:
        subject, priorities = CHURN_FILTERS[turn % len(CHURN_FILTERS)]
        spec = {"kind": "log", "subject": subject, "priorities": [int(p) for p in priorities]}
        sub = client.subscribe(subject, priorities=priorities, kinds="log")
        tally = Tally(log_acceptor(subject, priorities))
    result.call()
    fence(client, tag + ".start")
    result.call()
    stay = rng.uniform(4.0, 15.0)

    def read_until(deadline: float) -> None:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                delivered = sub.next(timeout=min(0.2, left))
            except herald.TimeoutError:
                continue
            if delivered is None:
                raise herald.ConnectionClosed("the subscription ended by itself")
            record = delivered.record
            if info and record.text == "snapshot":
                if record.subject in snapshots:
                    tally.anomalies.append(f"two snapshots of {record.subject}")
                snapshots[record.subject] = record.id or 0
            else:
                tally.add(delivered.seq, record)

    read_until(time.monotonic() + stay)
    fence(client, tag + ".end")
    result.call()
    read_until(time.monotonic() + GRACE)
    disconnect = rng.random() < 1.0 / 3.0
    if not disconnect:
        sub.close()
        result.call()
    spec.update(
        tag=tag,
        start=tag + ".start",
        end=tag + ".end",
        ended="disconnect" if disconnect else "unsubscribe",
        seconds=round(stay + GRACE, 2),
        gaps=[gap_entry(g) for g in list(sub.gaps)],
        disconnect=disconnect,
    )
    if info:
        spec.update(snapshots=len(snapshots), expected_snapshots=expected_snapshots)
    return tally.entry(**spec)


def run_churn(cfg: Dict[str, Any], result: Result) -> None:
    threads = [
        threading.Thread(target=churn, args=(cfg, j, False, result), daemon=True)
        for j in range(cfg["churn_log"])
    ] + [
        threading.Thread(target=churn, args=(cfg, j, True, result), daemon=True)
        for j in range(cfg["churn_info"])
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# ---- slow ----------------------------------------------------------------------------------


class RawConnection:
    """A native-protocol connection on a plain socket, read only as fast as asked."""

    def __init__(self, host: str, port: int, name: str, rcvbuf: int) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connect
        self.sock.settimeout(30.0)
        self.sock.connect((host, port))
        self.lock = threading.Lock()
        self.buffer = FrameBuffer()
        self.closed = threading.Event()
        self.send(Hello(name=name))
        welcome = self.read()
        if not isinstance(welcome, Welcome):
            raise herald.ConnectError(f"expected WELCOME, got {welcome}")
        self.buffer.max_frame_bytes = welcome.max_frame_bytes + 1024
        threading.Thread(target=self.heartbeat, daemon=True).start()

    def send(self, frame: Any) -> None:
        with self.lock:
            self.sock.sendall(encode_frame(frame))

    def heartbeat(self) -> None:
        while not self.closed.wait(1.0):
            try:
                self.send(Ping())
            except OSError:
                return

    def read(self) -> Any:
        while True:
            frame = self.buffer.next_frame()
            if frame is not None:
                return frame
            data = self.sock.recv(4096)
            if not data:
                raise herald.ConnectionClosed("the server closed the connection")
            self.buffer.feed(data)

    def close(self) -> None:
        self.closed.set()
        self.sock.close()


def slow(
    cfg: Dict[str, Any], spec: Dict[str, Any], finish: threading.Event, result: Result
) -> None:
    """Subscribes with `spec`'s filter and queue options, fences, then reads `rate` records/s
    until told to finish; then fences again, reads fast until its end fence is delivered
    (everything routed before it has then been delivered or reported), unsubscribes."""
    name = spec["name"]
    host, port = cfg["native"].rsplit(":", 1)
    priorities = [Priority(p) for p in spec["priorities"]]
    tally = Tally(log_acceptor(spec["subject"], priorities))
    gaps: List[List[Any]] = []
    start_tag, end_tag = f"{name}.start", f"{name}.end"
    fence_subject = spec["subject"].replace("*", "fence").replace("?", "f")
    seen_fences: Set[str] = set()

    def publish_fence(ack_id: int, tag: str) -> None:
        record = Record(
            kind=Kind.LOG,
            subject=fence_subject,
            time=time.time_ns(),
            priority=Priority.EMERGENCY,
            text="fence",
            fields={FENCE_FIELD: tag},
        )
        conn.send(Publish(ack_id, AckLevel.RECEIVED, [record]))
        result.call()

    def handle(frame: Any) -> int:
        if isinstance(frame, Deliver):
            for entry in frame.entries:
                if entry.subscription == 1:
                    tally.add(entry.seq, entry.record)
                    tag = entry.record.fields.get(FENCE_FIELD)
                    if tag is not None:
                        seen_fences.add(tag)
            if frame.undecodable:
                result.error(f"slow {name}: {len(frame.undecodable)} undecodable records")
            return len(frame.entries)
        if isinstance(frame, Gap):
            if not gaps:
                log(f"slow {name}: first GAP, {frame.count} lost from seq {frame.first_seq}")
            gaps.append(gap_entry(frame))
        elif isinstance(frame, Ping):
            conn.send(Pong())
        elif isinstance(frame, Error):
            raise herald.ServerError(frame.code, frame.message)
        return 0

    options = DeliveryOptions(policy=Policy.from_name(spec["policy"]))
    options.max_records = spec.get("max_records")
    options.max_bytes = spec.get("max_bytes")
    filt = Filter(spec["subject"], "*", PrioritySet.of(priorities), [], 1 << int(Kind.LOG))
    try:
        conn = RawConnection(host, int(port), f"soak-slow-{name}", spec["rcvbuf"])
        conn.send(Subscribe(1, 1, filt, options))
        while not isinstance(frame := conn.read(), Ok):
            handle(frame)
        result.call()
        publish_fence(2, start_tag)
        log(f"slow {name}: subscribed, start fence published")
        while start_tag not in seen_fences:
            handle(conn.read())
        log(f"slow {name}: start fence delivered, reading at {spec['rate']:g} records/s")
        print("ready", flush=True)
        budget = time.monotonic()
        while not finish.is_set():
            taken = handle(conn.read())
            budget = max(budget, time.monotonic() - 1.0) + taken / spec["rate"]
            pause = budget - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        publish_fence(3, end_tag)
        log(f"slow {name}: end fence published, reading fast")
        while end_tag not in seen_fences:
            handle(conn.read())
        log(f"slow {name}: end fence delivered after {len(tally.seqs)} records, {len(gaps)} GAPs")
        conn.send(Unsubscribe(4, 1))
        while not isinstance(frame := conn.read(), Ok):
            handle(frame)
        result.call()
        conn.close()
    except (herald.HeraldError, OSError, ValueError) as err:
        result.error(f"slow {name}", err)
        print("ready", flush=True)
    spec = dict(spec, kind="log", tag=name, start=start_tag, end=end_tag, gaps=gaps)
    result.add_sub(tally.entry(ended="unsubscribe", **spec))


def run_slow(cfg: Dict[str, Any], result: Result) -> None:
    """The slow subscribers; `finish` on stdin ends them (after the producers have stopped)."""
    finish = threading.Event()
    threads = [
        threading.Thread(target=slow, args=(cfg, spec, finish, result), daemon=True)
        for spec in cfg["slow"]
    ]
    for thread in threads:
        thread.start()
    for line in sys.stdin:
        if line.strip() == "finish":
            break
    finish.set()
    for thread in threads:
        thread.join()
