"""A smoke test of the browser UI in Firefox: Debian's firefox-esr driven by Selenium through
geckodriver (scripts/ui-firefox-deps.sh installs both; Playwright's own Firefox build is not
used). One walk through the four views against a real server with traffic from the Python
client; after each view the page's `window.__heraldErrors` (uncaught errors and unhandled
rejections, collected by the inline script at the top of index.html) must be empty, and a
screenshot is saved as target/ui-artifacts/firefox-{view}.png.

Without Firefox, geckodriver or selenium the test is skipped, unless CI=true or
UI_TEST_REQUIRE_FIREFOX=1 (scripts/ui-tests.sh sets it after installing them): then it fails.
`-m "not firefox"` leaves it out. UI_TEST_FIREFOX and UI_TEST_GECKODRIVER override the
binaries' paths."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable, Iterator, List

import herald
import pytest
from conftest import ARTIFACTS, VIEWPORT, Server, wait_until
from facility import create_objects, declare_types, log_record, put_history
from herald import Priority

pytestmark = pytest.mark.firefox

FIREFOX = os.environ.get("UI_TEST_FIREFOX", "/usr/bin/firefox-esr")
GECKODRIVER_CACHE = Path.home() / ".cache" / "herald" / "geckodriver" / "bin" / "geckodriver"


def geckodriver() -> str:
    explicit = os.environ.get("UI_TEST_GECKODRIVER")
    if explicit:
        return explicit
    if GECKODRIVER_CACHE.exists():
        return str(GECKODRIVER_CACHE)
    return shutil.which("geckodriver") or str(GECKODRIVER_CACHE)


def missing() -> List[str]:
    """What the test needs and does not find."""
    absent = [path for path in (FIREFOX, geckodriver()) if not os.access(path, os.X_OK)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        absent.append("the Python package selenium")
    return absent


@pytest.fixture(scope="module")
def firefox() -> Iterator[Any]:
    absent = missing()
    if absent:
        reason = f"Firefox smoke test needs {', '.join(absent)}: run scripts/ui-firefox-deps.sh"
        if os.environ.get("CI") == "true" or os.environ.get("UI_TEST_REQUIRE_FIREFOX") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.firefox.options import Options
    from selenium.webdriver.firefox.service import Service

    options = Options()
    # explicit paths: Selenium Manager never looks for (or downloads) a browser or driver
    options.binary_location = FIREFOX
    options.add_argument("-headless")
    options.set_preference("browser.shell.checkDefaultBrowser", False)
    options.set_preference("app.update.disabledForTesting", True)
    options.set_preference("browser.aboutwelcome.enabled", False)
    options.set_preference("datareporting.policy.dataSubmissionEnabled", False)
    driver = webdriver.Firefox(
        options=options, service=Service(executable_path=geckodriver(), log_output=os.devnull)
    )
    try:
        driver.set_window_size(VIEWPORT["width"], VIEWPORT["height"])
        driver.set_script_timeout(10)
        yield driver
    finally:
        driver.quit()


class Page:
    """The UI in Firefox: JS helpers, the error check and the per-view screenshot."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def wait(self, what: str, expression: str, timeout: float = 15.0) -> Any:
        """Waits until the JS `expression` is true (`v` is bound to the current view)."""
        script = (
            "const v = window.herald?.views.get(window.herald.current);"
            f" try {{ return {expression}; }} catch (e) {{ return false; }}"
        )
        return self.wait_for(what, lambda: self.js(script), timeout)

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = 15.0) -> Any:
        try:
            return wait_until(
                what,
                check,
                timeout,
                details=lambda: f"at {self.driver.current_url}, errors: {self.errors()}",
            )
        except pytest.fail.Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            self.driver.save_screenshot(str(ARTIFACTS / "firefox-timeout.png"))
            raise

    def errors(self) -> Any:
        return self.js("return window.__heraldErrors")

    def check(self, view: str) -> None:
        """The view is shown without a JS error; saves target/ui-artifacts/firefox-{view}.png."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(ARTIFACTS / f"firefox-{view}.png"))
        assert self.js("return window.herald.current") == view
        errors = self.errors()
        assert errors is not None, "index.html must define window.__heraldErrors"
        assert errors == [], f"JS errors in Firefox on #/{view}: {errors}"

    def go(self, hash_: str) -> None:
        """Switches view in the same page, as the tabs do (the logs stream stays open)."""
        self.js("location.hash = arguments[0]", f"#/{hash_}")


def test_the_ui_works_in_firefox(firefox: Any, server: Server, client: herald.Client) -> None:
    if os.environ.get("UI_TEST_LOCAL_UI"):
        pytest.skip("UI_TEST_LOCAL_UI serves the worktree's files through Playwright only")
    page = Page(firefox)

    # Logs: the live table shows published records
    firefox.get(f"{server.http}/#/logs")
    page.wait("the live log stream", "v.liveStartMs > 0")
    for i in range(30):
        priority = Priority.WARNING if i % 10 == 9 else Priority.INFO
        client.publish_record(log_record(i, "firefox.smoke", priority, f"firefox {i}", "ui-ff"))
    client.flush()
    page.wait("30 rows", "v.rows.filter((r) => !r.rowType).length === 30")
    page.wait(
        "the newest record in the table",
        "[...document.querySelectorAll('#logs .log-row')]"
        ".some((r) => r.textContent.includes('firefox 29'))",
    )
    page.check("logs")

    # Information: a value appears, then changes in the same cell
    declare_types(client)
    create_objects(client)
    page.go("info")
    cell = "tbody[data-name='SR.mag_ps_b02'] td.val[data-attr=current]"
    page.wait(
        "an info value",
        f"(window.uiTestCell = document.querySelector({cell!r})).textContent === '182.52'",
    )
    client.set_info("SR.mag_ps_b02", current=150.25)
    page.wait(
        "the value updated in place",
        f"document.querySelector({cell!r}) === window.uiTestCell"
        " && window.uiTestCell.textContent === '150.25'",
    )
    assert page.js("return document.querySelectorAll('tbody.obj').length") == 11
    page.check("info")

    # Charts: archived samples drawn on a uPlot canvas
    put_history(server, "Beam.Current", "BeamMonitor", points=60)
    wait_until(
        "archived samples",
        lambda: server.get("/archive/samples/Beam.Current", **{"from": "-1h"}, limit=100)[
            "records"
        ],
    )
    page.go("charts?series=Beam.Current:current&range=15m")
    page.wait("chart data", "v.chart && v.chart.data[1].filter((x) => x !== null).length > 30")
    size = page.js(
        "const c = window.herald.views.get('charts').chart.ctx.canvas;"
        " const r = c.getBoundingClientRect();"
        " return [c.width, c.height, r.width, r.height, c.closest('.uplot') !== null];"
    )
    assert min(size[:4]) > 0 and size[4], f"a visible uPlot canvas: {size}"
    colours = page.js(
        "const c = window.herald.views.get('charts').chart.ctx.canvas;"
        " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " const seen = new Set();"
        " for (let i = 0; i < d.length; i += 16) seen.add(d[i] << 16 | d[i+1] << 8 | d[i+2]);"
        " return seen.size;"
    )
    assert colours > 10, "the canvas is not blank"
    page.check("charts")

    # Server: every connected client is listed
    page.go("server")

    def listed() -> List[str]:
        """The current clients' names once the page lists them all (it polls every 2 s)."""
        names = [c["name"] for c in server.get("/monitor")["clients"]]
        table = page.js("return document.querySelector('#server table.clients')?.textContent ?? ''")
        return names if all(name in table for name in names) else []

    names = page.wait_for("every client in the Server view", listed)
    assert "ui-test-producer" in names and any(n.startswith("browser ") for n in names), names
    page.check("server")
