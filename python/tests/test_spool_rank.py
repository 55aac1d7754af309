"""The rank of a drop report in the disk buffer: shed after every record, EMERGENCY ones
included, kept when put back at close, and counted as the WARNING it is when lost."""

from __future__ import annotations

from pathlib import Path

from herald import Kind, Priority
from herald.drops import DISK_QUOTA, DISK_TORN, DROP_REPORT_TYPE, DropCounts
from herald.segment import REPORT_RANK
from herald.spool import Spool
from herald.wire.record import Record


def _report() -> bytes:
    counts = DropCounts()
    counts.count(int(Priority.DEBUG), DISK_QUOTA, 5)
    return counts.report("rank.test").to_bytes()


def test_a_drop_report_outlasts_emergency_records_that_fill_the_quota(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path), quota=64 * 1024)
    try:
        report = _report()
        spool.append([(REPORT_RANK, report)])
        emergency = Record(
            kind=Kind.LOG, subject="rank.test", time=1, priority=Priority.EMERGENCY, text="x" * 200
        ).to_bytes()
        for _ in range(20):  # some 190 KiB into 64 KiB
            spool.append([(int(Priority.EMERGENCY), emergency)] * 40)
        kept = [data for _, data in spool.read(1 << 30)]
        assert kept[0] == report, "the report outlasted the EMERGENCY records"
        assert spool.losses.by_priority.get(int(Priority.EMERGENCY), 0) > 0
        assert set(spool.losses.by_priority) == {int(Priority.EMERGENCY)}
    finally:
        spool.close()


def test_a_report_put_back_at_close_keeps_its_rank_and_a_lost_one_is_a_warning(
    tmp_path: Path,
) -> None:
    spool = Spool(str(tmp_path), quota=64 * 1024)
    try:
        report = _report()
        assert Record.from_bytes(report).type == DROP_REPORT_TYPE
        spool.keep_unacknowledged([(5, report)])
        assert spool._segments[0].counts[REPORT_RANK] == 1
        spool._lose(REPORT_RANK, DISK_TORN)
        assert spool.losses.by_priority == {int(Priority.WARNING): 1}
    finally:
        spool.close()
