"""What the browser UI tests share: a real `herald serve` on free ports with a temporary data
directory, the repository's Python client to make traffic, and Debian's Chromium driven by
Playwright with every console error collected (a test fails on any).

`--doc-screenshots` also writes docs/screenshots/{logs,info,charts,server}.png (1200x750)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import herald  # noqa: E402

ARTIFACTS = REPO / "target" / "ui-artifacts"
DOC_SCREENSHOTS = REPO / "docs" / "screenshots"
VIEWPORT = {"width": 1200, "height": 750}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--doc-screenshots",
        action="store_true",
        help="write docs/screenshots/{logs,info,charts,server}.png for the README",
    )


def herald_bin() -> str:
    explicit = os.environ.get("UI_TEST_HERALD")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    binary = target / "debug" / "herald"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: build it with `cargo build -p herald-cli`")
    return str(binary)


class Server:
    """A `herald serve` process; `url` is its native address, `http` its HTTP base URL."""

    def __init__(self, data_dir: Path, settings: Optional[Dict[str, str]] = None) -> None:
        self.proc = subprocess.Popen(
            [
                herald_bin(),
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--http",
                "127.0.0.1:0",
                "--data-dir",
                str(data_dir),
                "--log-level",
                "warn",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            # HERALD_* variables are server settings: none of the caller's may leak in
            env={
                **{k: v for k, v in os.environ.items() if not k.startswith("HERALD_")},
                **(settings or {}),
            },
        )
        self.lines: List[str] = []
        self.address = ""
        self.http = ""
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.lines.append(line)
                if "herald serving on " in line:
                    self.address = line.split("herald serving on ", 1)[1].split()[0]
                if "herald http on " in line:
                    self.http = "http://" + line.split("herald http on ", 1)[1].split()[0]
                if self.address and self.http:
                    ready.set()
            ready.set()  # the process ended

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(60) or not self.http:
            self.stop()
            pytest.fail("herald serve printed no addresses:\n" + "".join(self.lines))
        self.url = f"herald://{self.address}"

    def get(self, path: str, **params: Any) -> Any:
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        with urllib.request.urlopen(f"{self.http}{path}?{query}", timeout=10) as answer:
            return json.loads(answer.read())

    def put_info(self, name: str, body: Dict[str, Any]) -> Any:
        request = urllib.request.Request(
            f"{self.http}/info/{name}", data=json.dumps(body).encode(), method="PUT"
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def wait_until(
    what: str, check: Callable[[], Any], timeout: float = 15.0, details: Callable[[], str] = str
) -> Any:
    """Polls `check` until it returns something true; fails the test after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what} {details()}")
        time.sleep(0.1)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data")
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def client(server: Server) -> Iterator[herald.Client]:
    with herald.connect(server.url, name="ui-test-producer") as c:
        yield c


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        args = list(CHROMIUM_ARGS)
        if os.environ.get("UI_TEST_LOCAL_UI"):
            # a page served by page.route() has no address space: let it reach 127.0.0.1
            args.append("--disable-features=LocalNetworkAccessChecks")
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        yield b
        b.close()


# Records every WebSocket the page opens and every message it receives, in the page itself
# (Playwright's `websocket` event can miss a socket opened while another one closes).
RECORD_SOCKETS = """(() => {
  const Native = window.WebSocket;
  window.uiTestSockets = [];
  window.uiTestFrames = [];
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      window.uiTestSockets.push(String(url));
      this.addEventListener("message", (e) => window.uiTestFrames.push(String(e.data)));
    }
  };
})();"""


class UiPage:
    """A browser page on the server's UI that records console errors and WebSockets."""

    def __init__(self, page: Any, server: Server) -> None:
        self.page = page
        self.server = server
        self.errors: List[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.add_init_script(RECORD_SOCKETS)

    def frames(self, start: int = 0) -> List[str]:
        """The WebSocket messages received so far (from the `start`th)."""
        return self.page.evaluate("n => window.uiTestFrames.slice(n)", start)

    def frame_count(self) -> int:
        return self.page.evaluate("() => window.uiTestFrames.length")

    def serve_local_ui(self, folder: Path) -> None:
        """Serves / and /ui/* from `folder` instead of the binary (UI_TEST_LOCAL_UI=1: edit
        the UI and rerun the tests without rebuilding the server)."""
        types = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}

        def fulfil(route: Any) -> None:
            path = urllib.parse.urlparse(route.request.url).path
            file = folder / ("index.html" if path == "/" else path[len("/ui/") :])
            route.fulfill(
                body=file.read_bytes(),
                content_type=types.get(file.suffix, "application/octet-stream"),
            )

        self.page.route(re.compile(r"^http://[^/]+/(ui/.*)?$"), fulfil)

    def open(self, hash_: str) -> Any:
        self.page.goto(f"{self.server.http}/#/{hash_}")
        return self.page

    def socket_urls(self, path: str) -> List[str]:
        urls = self.page.evaluate("() => window.uiTestSockets")
        return [u for u in urls if urllib.parse.urlparse(u).path == path]

    def view(self, name: str, expression: str) -> Any:
        """Evaluates `expression` with `v` bound to the view object `name`."""
        return self.page.evaluate(
            f"() => {{ const v = window.herald.views.get({name!r}); return {expression}; }}"
        )


@pytest.fixture
def ui(
    browser: Any, server: Server, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[UiPage]:
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    page = context.new_page()
    wrapped = UiPage(page, server)
    if os.environ.get("UI_TEST_LOCAL_UI"):
        wrapped.serve_local_ui(REPO / "crates" / "herald-server" / "ui")
    try:
        yield wrapped
    finally:
        name = re.sub(r"[^\w.-]", "_", request.node.name)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for target in (tmp_path / f"{name}.png", ARTIFACTS / f"{name}.png"):
            page.screenshot(path=str(target))
        context.close()
    assert not wrapped.errors, f"console errors: {wrapped.errors}"


@pytest.fixture
def doc_screenshot(request: pytest.FixtureRequest) -> Callable[[Any, str], Optional[Path]]:
    """Writes docs/screenshots/{view}.png when --doc-screenshots is given (else nothing)."""

    def shoot(page: Any, view: str) -> Optional[Path]:
        if not request.config.getoption("--doc-screenshots"):
            return None
        DOC_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        target = DOC_SCREENSHOTS / f"{view}.png"
        page.screenshot(path=str(target))
        optimise_png(target)
        return target

    return shoot


def optimise_png(path: Path) -> None:
    """Shrinks a screenshot with a 256-colour palette when Pillow is there (UI colours are flat)."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "firefox: the Firefox smoke test (Selenium, geckodriver)")
