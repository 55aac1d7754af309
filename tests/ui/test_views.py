"""End-to-end tests of the browser UI: a real server, real traffic from the Python client, and
Chromium. Each test leaves a screenshot in target/ui-artifacts/ (and its tmp_path)."""

from __future__ import annotations

import dataclasses
import threading
import urllib.parse
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterator, List

import herald
import pytest
from conftest import Server, UiPage, wait_until
from facility import create_objects, declare_types, log_record, publish_logs, put_history
from herald import Priority
from herald.wire.record import Origin

RECORD_ROWS = "v.rows.filter((r) => !r.rowType)"


def wait_live(ui: UiPage) -> None:
    """Waits until the logs view's socket said hello (the live stream has started)."""
    ui.page.wait_for_function("() => window.herald.views.get('logs')?.liveStartMs > 0")


def publish(client: herald.Client, subject: str, priority: Priority, text: str, i: int = 0) -> None:
    client.publish_record(log_record(i, subject, priority, text, "ui-test"))


def texts(ui: UiPage) -> List[str]:
    return ui.view("logs", f"{RECORD_ROWS}.map((r) => r.text)")


def test_live_view_receives_records_and_the_server_applies_the_filter(
    ui: UiPage, client: herald.Client, doc_screenshot: Callable[..., Any]
) -> None:
    page = ui.open("logs")
    wait_live(ui)
    publish_logs(client, 300)
    # Counted without the marker rows: "live stream started", and "start of the archive"
    # once the view has read back to it (waiting for more than 300 rows in all passed at 299
    # records with both).
    logs = "window.herald.views.get('logs')"
    page.wait_for_function(f"() => {{ const v = {logs}; return {RECORD_ROWS}.length >= 300; }}")
    assert ui.view("logs", f"{RECORD_ROWS}.length") == 300
    # The list reuses its row elements: a hidden one may still carry a warning's class.
    page.locator(".log-row.p-warning:not([hidden])").last.click()
    page.locator(".log-detail").get_by_text("origin.process").wait_for()
    doc_screenshot(page, "logs")

    page.fill("input[name=priority]", ">=WARNING")
    page.fill("input[name=subject]", "ANTENNA.*")
    page.press("input[name=subject]", "Enter")
    wait_until(
        "a filtered socket",
        lambda: any("subject=" in u for u in ui.socket_urls("/ws/records")),
        details=lambda: (
            f"sockets: {ui.socket_urls('/ws/records')}, page: {page.url}, "
            f"view: {ui.view('logs', '[v.socket.ws.url, v.connection]')}, errors: {ui.errors}"
        ),
    )
    url = ui.socket_urls("/ws/records")[-1]
    query = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)
    assert query["priority"] == [">=WARNING"] and query["subject"] == ["ANTENNA.*"]
    assert "priority=%3E%3DWARNING" in page.url and "subject=ANTENNA.*" in page.url
    wait_live(ui)
    frames_before = ui.frame_count()
    publish(client, "ANTENNA.DV01.Mount", Priority.INFO, "filtered-out: info")
    publish(client, "SR.RF.Cavity2", Priority.ERROR, "filtered-out: other subject")
    publish(client, "ANTENNA.DV01.Mount", Priority.WARNING, "passes the filter")
    client.flush()
    page.get_by_text("passes the filter").wait_for()
    new_frames = "".join(ui.frames(frames_before))
    assert "passes the filter" in new_frames
    assert "filtered-out" not in new_frames, "the server must not send filtered-out records"
    assert all(
        r.startswith("ANTENNA.") for r in ui.view("logs", f"{RECORD_ROWS}.map((r) => r.subject)")
    )


def test_pause_and_resume_lose_nothing(ui: UiPage, client: herald.Client) -> None:
    page = ui.open("logs?subject=pause.*")
    wait_live(ui)
    page.click("button.pause")
    total = 500
    for i in range(total):
        publish(client, "pause.test", Priority.INFO, f"while paused {i}", i)
    client.flush()
    page.get_by_role("button", name=f"Resume ({total} new)").wait_for()
    assert ui.view("logs", f"{RECORD_ROWS}.length") == 0, "nothing is shown while paused"
    page.keyboard.press("Space")  # the keyboard resumes as the button does
    page.get_by_text(f"while paused {total - 1}").wait_for()
    shown = texts(ui)
    assert shown == [f"while paused {i}" for i in range(total)]


def test_scroll_back_continues_into_the_archive(
    ui: UiPage, server: Server, client: herald.Client
) -> None:
    old = 1500
    for i in range(old):
        publish(client, "hist.sensor", Priority.INFO, f"archived {i}", i)
    client.flush()
    wait_until(
        "the archive to hold the records",
        lambda: (
            len(
                server.get("/archive/logs", subject="hist.*", **{"from": "-1h"}, limit=2000)[
                    "records"
                ]
            )
            == old
        ),
    )
    page = ui.open("logs?subject=hist.*")
    wait_live(ui)
    for i in range(200):
        publish(client, "hist.sensor", Priority.INFO, f"live {i}", i)
    client.flush()
    page.get_by_text("live 199").wait_for()

    def scrolled_to_the_start() -> bool:
        page.evaluate("document.querySelector('.log-scroller').scrollTop = 0")
        return ui.view("logs", "v.rows.some((r) => r.text === 'archived 0')")

    wait_until("scroll-back to reach the first archived record", scrolled_to_the_start, 30)
    # Loading older rows keeps the rows in view where they were, so the last load can
    # leave the first record just above the viewport: scroll to the top once more.
    page.evaluate("document.querySelector('.log-scroller').scrollTop = 0")
    page.get_by_text("archived 0", exact=True).wait_for()
    rows = ui.view("logs", "v.rows.map((r) => r.rowType === 'marker' ? 'MARKER' : r.text)")
    expected = (
        [f"archived {i}" for i in range(old)] + ["MARKER"] + [f"live {i}" for i in range(200)]
    )
    assert rows == expected, "history and live are one list, each record once, the marker between"


def test_an_info_update_appears_in_place(
    ui: UiPage, client: herald.Client, doc_screenshot: Callable[..., Any]
) -> None:
    declare_types(client)
    create_objects(client)
    page = ui.open("info")
    cell = page.locator("tbody[data-name='SR.mag_ps_b02'] td.val[data-attr=current]")
    cell.wait_for()
    assert cell.inner_text() == "182.52"
    assert page.get_by_text("output current (A)").count() >= 4, "descriptions come from /info-types"
    client.set_info("SR.mag_ps_b02", current=150.25)
    page.wait_for_function(
        "() => { const c = document.querySelector("
        "\"tbody[data-name='SR.mag_ps_b02'] td.val[data-attr=current]\");"
        " return c.textContent === '150.25' && c.classList.contains('flash'); }"
    )
    page.evaluate(
        "document.querySelector('details[data-ns=SR]').scrollIntoView({ block: 'start' })"
    )
    doc_screenshot(page, "info")
    assert page.locator("tbody.obj").count() == 11, "the same rows, updated in place"

    page.fill("input[name=match]", r"SR\..*|Beam\..*")
    page.press("input[name=match]", "Enter")
    page.wait_for_function("() => document.querySelectorAll('tbody.obj').length === 5")
    assert "match=SR" in page.url
    assert ui.socket_urls("/ws/info")[-1].endswith("match=SR%5C..*%7CBeam%5C..*")

    page.check("input[data-series='Beam.Current:current']")
    page.get_by_role("button", name="Chart selected (1)").click()
    page.wait_for_url("**#/charts?series=Beam.Current%3Acurrent*")


def test_unsigned_64_bit_values_show_every_digit(ui: UiPage, client: herald.Client) -> None:
    client.declare_type(
        "Counters",
        [
            ("frames", "u64", "frames since power-on"),
            ("mask", "u64", "enabled channels"),
            ("history", "array<u64>", "frames at each reset"),
        ],
    )
    client.set_info("LAB.counters", "Counters", frames=(1 << 64) - 1, mask=1, history=[1])
    client.set_info("LAB.raw", "Counters", frames=1, mask=(1 << 63) + 1, history=[(1 << 64) - 2, 3])
    page = ui.open("info")
    frames = page.locator("tbody[data-name='LAB.counters'] td.val[data-attr=frames]")
    frames.wait_for()
    # A double would show 18446744073709552000.
    assert frames.inner_text() == "18446744073709551615"
    raw = "tbody[data-name='LAB.raw'] td.val[data-attr={}]"
    assert page.locator(raw.format("mask")).inner_text() == "9223372036854775809"
    assert page.locator(raw.format("history")).inner_text() == "[18446744073709551614,3]"
    client.set_info("LAB.counters", frames=(1 << 64) - 3)
    page.wait_for_function(
        "() => document.querySelector(\"tbody[data-name='LAB.counters'] td.val[data-attr=frames]\")"
        ".textContent === '18446744073709551613'"
    )


def test_a_chart_renders_archived_points(
    ui: UiPage, server: Server, client: herald.Client, doc_screenshot: Callable[..., Any]
) -> None:
    declare_types(client)
    put_history(server, "Beam.Current", "BeamMonitor")
    create_objects(client)
    wait_until(
        "archived samples",
        lambda: server.get("/archive/samples/Beam.Current", **{"from": "-1h"}, limit=1000)[
            "records"
        ],
    )
    page = ui.open("charts?series=Beam.Current:current,Beam.Current:lifetime&range=15m")
    page.wait_for_function(
        "() => { const c = window.herald.views.get('charts').chart;"
        " return c && c.data[1].filter((v) => v !== null).length > 100; }"
    )
    # Pixels of the first series' colour (#4e9fe5) inside the plotting area (its axis labels
    # share the colour but lie outside it): the line was drawn.
    line_pixels = page.evaluate(
        """() => { const u = window.herald.views.get('charts').chart, b = u.bbox;
        const d = u.ctx.getImageData(b.left, b.top, b.width, b.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) {
          if (Math.abs(d[i] - 0x4e) < 12 && Math.abs(d[i+1] - 0x9f) < 12
              && Math.abs(d[i+2] - 0xe5) < 12) n += 1;
        }
        return n; }"""
    )
    assert line_pixels > 50, "the series line is drawn in the plotting area"
    client.set_info("Beam.Current", current=180.0)
    # the live value is appended (min = max = 180), or already in a bucket if the view re-queried
    page.wait_for_function("() => window.herald.views.get('charts').chart.data[2].includes(180)")
    doc_screenshot(page, "charts")

    # drag to zoom: the archive is asked again for the selected range, one bucket per pixel
    def sample_queries() -> List[str]:
        return page.evaluate("""() => performance.getEntriesByType('resource').map((e) => e.name)
            .filter((n) => n.includes('/archive/samples/'))""")

    before = len(sample_queries())
    box = page.locator(".u-over").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.3, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=5)
    page.mouse.up()
    page.wait_for_url("**from=*")
    queries = wait_until("a zoomed archive query", lambda: sample_queries()[before:])
    zoomed = urllib.parse.parse_qs(urllib.parse.urlparse(queries[-1]).query)
    span = (
        datetime.fromisoformat(zoomed["to"][0].replace("Z", "+00:00"))
        - datetime.fromisoformat(zoomed["from"][0].replace("Z", "+00:00"))
    ).total_seconds()
    assert 200 < span < 340, "about 30 % of 15 minutes"
    assert abs(int(zoomed["buckets"][0]) - box["width"]) < 3
    # the zoomed answer drawn (the status names the window), not only asked for: a CSV taken
    # while it loads is of the window still shown
    page.wait_for_function(
        "(from) => window.herald.views.get('charts').status.textContent.includes(from)",
        arg=zoomed["from"][0],
    )
    with page.expect_download() as download:
        page.get_by_role("button", name="CSV").click()
    csv = open(download.value.path()).read().splitlines()
    assert csv[0].startswith("time,Beam.Current:current mean") and len(csv) > 20
    times = [line.split(",")[0] for line in csv[1:]]
    assert zoomed["from"][0] <= times[0] and times[-1] <= zoomed["to"][0], "the visible data only"
    with page.expect_download() as download:
        page.get_by_role("button", name="PNG").click()
    assert open(download.value.path(), "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_the_server_page_shows_a_slow_subscribers_drops(
    ui: UiPage, server: Server, doc_screenshot: Callable[..., Any]
) -> None:
    with herald.connect(server.url, name="slow-subscriber") as slow:
        sub = slow.subscribe("gap.*", options=herald.DeliveryOptions(max_records=100))
        gate = threading.Event()
        deliver = sub._deliver

        def stalled(d: Any) -> None:  # the reader thread stops reading for a while
            gate.wait(30)
            deliver(d)

        sub._deliver = stalled  # type: ignore[method-assign]
        try:
            with herald.connect(server.url, name="fast-producer") as producer:
                for i in range(20_000):
                    producer.publish("gap.n", text="x" * 1000, fields={"i": i})
                producer.flush(30)
            lost = wait_until(
                "drops in the monitor",
                lambda: [
                    s["dropped"]
                    for c in server.get("/monitor")["clients"]
                    if c["name"] == "slow-subscriber"
                    for s in c["subscriptions"]
                    if s["dropped"] > 0
                ],
            )[0]
            page = ui.open("server")
            row = page.locator("tr.drops[data-client=slow-subscriber]")
            row.wait_for()
            shown = int(row.locator("td.dropped").inner_text().replace(",", ""))
            assert shown >= lost > 0
            assert "gap.*" in row.inner_text()
            doc_screenshot(page, "server")
        finally:
            gate.set()


@pytest.fixture
def small_queue_server(tmp_path: Path) -> Iterator[Server]:
    """A server whose queues hold 100 records, so a browser that stops reading loses some.
    Requested before `ui`, it stops after the page's last screenshot."""
    s = Server(tmp_path / "small", {"HERALD_QUEUE_RECORDS": "100"})
    try:
        yield s
    finally:
        s.stop()


def test_gap_notices_appear_inline(small_queue_server: Server, ui: UiPage) -> None:
    small = small_queue_server
    ui.server = small
    page = ui.open("logs?subject=gap.*")
    wait_live(ui)
    # the page stops reading for 5 s; the server's queue for this socket overflows meanwhile
    page.evaluate("setTimeout(() => { const t = Date.now(); while (Date.now() - t < 5000); }, 0)")
    total = 30_000
    with herald.connect(small.url, name="gap-producer") as producer:
        for i in range(total):
            producer.publish_record(
                log_record(
                    i,
                    "gap.n",
                    Priority.DEBUG if i % 2 else Priority.INFO,
                    f"{i:06d}" + "x" * 994,  # distinct: identical records would collapse
                    "gap",
                )
            )
        producer.flush(30)
    # Counted as each message arrives, drawn into rows at the next render (≤ 100 ms later):
    # wait for both, or the rows may lack the last gaps.
    wait_until(
        "every record counted and drawn",
        lambda: ui.view(
            "logs", "v.received + v.dropped === " + str(total) + " && !v.pending.length"
        ),
        30,
    )
    gaps = ui.view("logs", "v.rows.filter((r) => r.rowType === 'gap').map((r) => r.gap)")
    dropped = ui.view("logs", "v.dropped")
    assert dropped > 0 and sum(g["count"] for g in gaps) == dropped
    assert all(sum(g["priorities"].values()) == g["count"] for g in gaps)
    first = ui.view("logs", "v.rows.findIndex((r) => r.rowType === 'gap')")
    page.evaluate(
        "i => { document.querySelector('.log-scroller').scrollTop = (i - 3) * 20; }", first
    )
    row = page.locator(".gap-row").first
    row.wait_for()
    assert row.inner_text().startswith(f"⚠ {gaps[0]['count']:,} records dropped")
    assert "dropped" in page.locator(".status").first.inner_text()


@pytest.fixture
def storm_server(tmp_path: Path) -> Iterator[Server]:
    """A server whose log-storm window is 1 s and that passes 3 identical records in one."""
    s = Server(tmp_path / "storm", {"HERALD_STORM_WINDOW": "1s", "HERALD_STORM_REPEATS": "3"})
    try:
        yield s
    finally:
        s.stop()


def test_a_log_storm_shows_as_one_row_with_its_count(storm_server: Server, ui: UiPage) -> None:
    ui.server = storm_server
    page = ui.open("logs?subject=PLC.*")
    wait_live(ui)
    with herald.connect(storm_server.url, name="plc-gateway") as producer:
        for i in range(500):
            record = log_record(i, "PLC.valve7", Priority.ERROR, "valve 7 position unknown", "gw")
            producer.publish_record(
                dataclasses.replace(record, origin=Origin(host="plc7", process="plcgw"))
            )
        producer.flush(10)
    # Three rows, the row that starts the storm, then (the window over) one row for the rest.
    page.locator(".log-row .repeat", has_text="×496").wait_for(timeout=15_000)
    assert page.locator(".log-row .repeat", has_text="storm").first.inner_text() == "storm"
    texts = ui.view("logs", f"{RECORD_ROWS}.map((r) => r.text)")
    assert texts == ["valve 7 position unknown"] * 5, texts
    page.locator(".log-row .repeat", has_text="storm over").wait_for(timeout=15_000)
