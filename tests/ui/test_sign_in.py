"""Signing in to a server with identities (docs/security.md): the UI asks for the token once,
in a sign-in box, keeps it for the tab's session only (never in the URL), presents it on every
request and WebSocket, and asks again, saying why, when the server refuses it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterator

import herald
import pytest
from conftest import Server, UiPage, herald_bin
from herald import Priority


@pytest.fixture
def token(tmp_path: Path) -> str:
    made = subprocess.run(
        [herald_bin(), "token", "new", "operator", "--data-dir", str(tmp_path / "data")]
        + ["--publish", "*", "--subscribe", "*", "--info-read", "*", "--query", "--admin"],
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


@pytest.fixture
def server(tmp_path: Path, token: str) -> Iterator[Server]:
    """Overrides conftest's: the same server, with the identity `operator` made first."""
    s = Server(tmp_path / "data")
    try:
        yield s
    finally:
        s.stop()


def sign_in(ui: UiPage, value: str) -> None:
    box = ui.page.locator("form.sign-in")
    box.wait_for()
    ui.page.fill("#sign-in-token", value)
    box.locator("button").click()


def test_the_ui_asks_for_the_token_once_and_keeps_it_out_of_the_url(
    ui: UiPage, server: Server, token: str
) -> None:
    page = ui.open("logs")
    sign_in(ui, "hrd_not-a-token")
    page.locator("form.sign-in .error").get_by_text("unknown token").wait_for()
    sign_in(ui, token)
    page.wait_for_function("() => window.herald.views.get('logs')?.liveStartMs > 0")
    assert page.locator("form.sign-in").count() == 0
    assert token not in page.url
    assert page.evaluate("() => sessionStorage.getItem('herald.token')") == token
    assert all(token not in url for url in ui.socket_urls("/ws/records"))

    with herald.connect(f"{server.url}?token={token}", name="ui-test-producer") as client:
        client.log(Priority.WARNING, "ANTENNA.DV01", "seen after signing in")
        client.flush()
    page.get_by_text("seen after signing in").wait_for()

    # The server page shows who is connected: this tab's live tail, as `operator`.
    ui.open("server")
    page.locator(".clients .identity").get_by_text("identity operator").first.wait_for()
    assert page.locator("form.sign-in").count() == 0, "asked only once"

    # Signing out forgets the token: the next request asks again.
    page.locator("#sign-out").click()
    page.locator("form.sign-in").wait_for()
    assert page.evaluate("() => sessionStorage.getItem('herald.token')") is None
    # The refusals before signing in are the browser's own console lines, not UI errors: 401s,
    # the refused WebSocket, and the 400 `not_websocket` of the plain GET by which the live
    # tail asks why its socket was refused (socket.js) before it reconnects.
    expected = ("status of 401", "status of 400", "WebSocket")
    ui.errors[:] = [e for e in ui.errors if not any(x in e for x in expected)]
