"""The scripts in python/examples, run as users would run them, against a real server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import List

from conftest import Server

import herald
from herald import Kind, Priority

PYTHON_DIR = Path(__file__).resolve().parents[1]
EXAMPLES = PYTHON_DIR / "examples"


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PYTHON_DIR)
    env.update(extra)
    return env


def run_example(name: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_publish_example_with_argument(server: Server) -> None:
    with herald.connect(server.url, name="reader") as reader, reader.subscribe("example.*") as sub:
        done = run_example("publish.py", server.url)
        assert done.returncode == 0, done.stderr
        got = sub.wait_for(3, timeout=10)
    assert [d.text for d in got] == ["order 1 placed", "order 2 placed", "stock is low"]
    assert got[0].fields == {"id": 1}
    assert got[2].record.kind == Kind.LOG
    assert got[2].record.priority == Priority.WARNING
    assert got[2].fields == {"item": "widget", "left": 3}


def test_publish_example_with_environment(server: Server) -> None:
    with herald.connect(server.url, name="reader") as reader, reader.subscribe("example.*") as sub:
        done = run_example("publish.py", HERALD_SERVER=server.url)
        assert done.returncode == 0, done.stderr
        assert len(sub.wait_for(3, timeout=10)) == 3


def test_subscribe_example_prints_what_is_published(server: Server) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "subscribe.py"), server.url, "demo.*", "2"],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "subscribed"
        with herald.connect(server.url, name="writer") as writer:
            writer.publish("other.topic", text="not matched")
            writer.publish("demo.a", text="first", fields={"n": 1})
            writer.log(Priority.ERROR, "demo.b", "second")
            writer.flush()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    lines: List[str] = out.strip().splitlines()
    assert lines == ["INFO demo.a: first {'n': 1}", "ERROR demo.b: second {}"]


def test_logging_handler_example(server: Server) -> None:
    with herald.connect(server.url, name="reader") as reader, reader.subscribe("example.*") as sub:
        started = time.monotonic()
        done = run_example("logging_handler.py", server.url)
        assert done.returncode == 0, done.stderr
        got = sub.wait_for(3, timeout=10)
    assert time.monotonic() - started < 30
    assert [d.record.priority for d in got] == [Priority.INFO, Priority.WARNING, Priority.ERROR]
    assert all(d.subject == "example.app" and d.record.kind == Kind.LOG for d in got)
    assert got[0].text == "service started on port 8080"
    assert got[1].text == "disk /var is 91% full"
    assert got[1].fields == {"disk": "/var"}
    assert got[2].text.startswith("could not parse the setting\nTraceback")
    assert "ValueError" in got[2].text
    # The console handler of the example prints WARNING and above to stderr.
    assert "disk /var is 91% full" in done.stderr
