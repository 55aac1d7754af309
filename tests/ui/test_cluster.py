"""The server page of a cluster member (docs/cluster.md): the cluster's name and this member,
a row for each route with its far member, direction, state, traffic and round trip, and the
namespaces of information objects with their owners; a single server shows no cluster
section."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import herald
import pytest
from conftest import Server, UiPage, wait_until

NAMESPACES = """
[[cluster.namespaces]]
name = "antenna"
names = ["ANTENNA.*"]
owner = "member-a"
"""


def member(data_dir: Path, name: str, seed: str = "") -> Server:
    data_dir.mkdir(parents=True, exist_ok=True)
    config = data_dir.parent / f"{name}.toml"
    config.write_text(NAMESPACES)
    settings = {
        "HERALD_NAME": name,
        "HERALD_CONFIG": str(config),
        "HERALD_CLUSTER_NAME": "ui-test",
        "HERALD_CLUSTER_LISTEN": "127.0.0.1:0",
    }
    if seed:
        settings["HERALD_CLUSTER_ROUTES"] = f"herald://{seed}"
    return Server(data_dir, settings)


def route_address(server: Server) -> str:
    """The route listener's address, from the `cluster:` line of the serve banner."""
    line = wait_until(
        "the cluster line of the banner",
        lambda: next((x for x in server.lines if x.startswith("  cluster: ")), None),
    )
    return str(line.rsplit(" routes on ", 1)[1].strip())


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """Overrides conftest's: member-a of a cluster, the one the UI shows."""
    s = member(tmp_path / "a", "member-a")
    try:
        yield s
    finally:
        s.stop()


def test_the_server_page_shows_each_route_of_the_member(
    ui: UiPage, server: Server, tmp_path: Path
) -> None:
    b = member(tmp_path / "b", "member-b", route_address(server))
    try:
        with herald.connect(b.url, name="ui-test-subscriber") as subscriber:
            subscriber.subscribe("CLUSTER.*")
            page = ui.open("server")
            row = page.locator("table.routes tr[data-member='member-b']")
            row.wait_for()
            page.get_by_text("Cluster ui-test: member member-a").wait_for()
            # Routes on loopback without a cluster secret: the title says so.
            page.get_by_text("routes not authenticated").wait_for()
            # b's subscriber is an interest of b on a's route to it.
            wait_until(
                "b's interest on the route",
                lambda: row.locator("td").nth(11).text_content() == "1",
                details=lambda: row.inner_text(),
            )
            assert row.locator("td").nth(2).text_content() in ("in", "out")
            assert row.locator("td").nth(3).text_content() == "up"
            namespace = page.locator("table.namespaces tr[data-namespace='antenna']")
            assert namespace.locator("td.owner").text_content() == "member-a"
            assert namespace.locator("td").nth(3).text_content() == "static"
            # The route's round trip, timed by its heartbeats.
            wait_until(
                "the route's round trip",
                lambda: (row.locator("td.rtt").text_content() or "").endswith(" ms"),
                details=lambda: row.inner_text(),
            )
    finally:
        b.stop()


def test_a_single_server_shows_no_cluster(ui: UiPage, tmp_path: Path) -> None:
    single = Server(tmp_path / "single")
    try:
        ui.server = single
        page = ui.open("server")
        page.locator("table.clients").wait_for()
        page.wait_for_function("() => document.querySelector('div.cluster')?.hidden === true")
    finally:
        single.stop()


def test_a_loss_on_a_route_shows_in_the_logs_view_naming_the_member(
    ui: UiPage, tmp_path: Path
) -> None:
    # The publisher's member holds 8 records per queue: a burst overflows its route.
    source = Server(
        tmp_path / "source",
        {
            "HERALD_NAME": "member-src",
            "HERALD_QUEUE_RECORDS": "8",
            "HERALD_CLUSTER_NAME": "ui-gap",
            "HERALD_CLUSTER_LISTEN": "127.0.0.1:0",
        },
    )
    viewer = Server(
        tmp_path / "viewer",
        {
            "HERALD_NAME": "member-view",
            "HERALD_CLUSTER_NAME": "ui-gap",
            "HERALD_CLUSTER_LISTEN": "127.0.0.1:0",
            "HERALD_CLUSTER_ROUTES": f"herald://{route_address(source)}",
        },
    )
    try:
        ui.server = viewer
        page = ui.open("logs")
        page.wait_for_function("() => window.herald.views.get('logs')?.liveStartMs > 0")
        # The view's live tail is an interest of the viewer's on the source's route.
        wait_until(
            "the view's interest on the source's route",
            lambda: any(r["interests"] >= 1 for r in source.get("/monitor")["cluster"]["routes"]),
        )
        with herald.connect(source.url, name="ui-test-burst") as client:
            for i in range(100_000):
                client.log(herald.Priority.INFO, "BURST.x", f"burst {i}")
            client.flush()
        page.locator(".gap-row").get_by_text(
            "lost on the way from server member-src"
        ).first.wait_for()
    finally:
        viewer.stop()
        source.stop()
