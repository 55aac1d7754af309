"""The log-storm rule as the Python handler keeps it (herald.storm), the same as the
server's: the first records pass, one starts the storm, the rest are counted into
summaries, every one exactly once; a flood of distinct records hides no storm."""

from herald.storm import HELD, MAX_TRACKED, PASS, STARTS, Collapser, summary_fields


def test_the_first_pass_one_starts_the_storm_and_the_rest_are_counted_once() -> None:
    c: Collapser[int] = Collapser(window=10, repeats=3)
    verdicts = [c.offer("k", now=i * 0.001, time_ns=i, record=i) for i in range(8)]
    assert verdicts == [PASS] * 3 + [STARTS] + [HELD] * 4
    assert c.tick(5) == []
    (summary,) = c.tick(10)
    assert (summary.record, summary.repeated, summary.first_ns, summary.last_ns) == (7, 4, 4, 7)
    assert summary.ended is None
    c.offer("k", 11, 100, 100)
    (ended,) = c.tick(20)
    assert (ended.repeated, ended.ended) == (1, 5)
    assert summary_fields(ended)["herald.storm"] == "ended"
    assert c.offer("k", 21, 0, 0) == PASS


def test_every_held_record_is_in_one_summary() -> None:
    c: Collapser[int] = Collapser(window=10, repeats=3)
    held, summaries = 0, []
    for i in range(10_000):
        held += c.offer("k", i / 100, i, i) == HELD
        if i % 37 == 0:
            summaries += c.tick(i / 100)
    summaries += c.finish()
    assert sum(s.repeated for s in summaries) == held
    assert summaries[-1].ended == held


def test_a_flood_of_distinct_records_hides_no_storm() -> None:
    c: Collapser[int] = Collapser(window=10, repeats=3)
    for _ in range(5):
        c.offer("storm", 0, 0, 0)
    for key in range(3 * MAX_TRACKED):
        assert c.offer(key, 0, 0, 0) == PASS
    assert c.offer("storm", 0, 0, 0) == HELD
    assert [c.offer("new", 0, 0, 0) for _ in range(4)][3] == STARTS
    assert c.untracked == 0
    off: Collapser[int] = Collapser(window=10, repeats=0)
    assert all(off.offer("k", i, i, i) == PASS for i in range(100))
