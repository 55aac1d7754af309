"""The server pages of a one-way mirror and of its source (docs/cluster.md, "Mirrors"): the
source shows the mirror it feeds with its state and lag, the mirror shows what it holds
read-only and from whom."""

from __future__ import annotations

from pathlib import Path

from conftest import Server, UiPage, wait_until


def test_the_mirror_and_its_source_show_the_feed(
    ui: UiPage, server: Server, tmp_path: Path
) -> None:
    config = tmp_path / "source.toml"
    config.write_text(
        f'[[mirror]]\nto = "herald://{server.address}"\n'
        'subjects = ["ANTENNA.*"]\nobjects = ["ANTENNA.*"]\n'
    )
    source = Server(tmp_path / "source", {"HERALD_NAME": "control", "HERALD_CONFIG": str(config)})
    try:
        wait_until(
            "the source feeds the mirror",
            lambda: any(m["up"] for m in source.get("/monitor").get("mirrors", [])),
        )
        # The UI's server is the mirror.
        page = ui.open("server")
        row = page.locator("table.mirrors tr[data-source='control']")
        row.wait_for()
        assert "read-only mirror of control: subjects ANTENNA.*" in (row.text_content() or "")
        # The source's own page, in the same UI code, from its monitor.
        mirrors = source.get("/monitor")["mirrors"]
        assert mirrors[0]["to"] == server.address and mirrors[0]["lag_ms"] == 0
    finally:
        source.stop()
