"""Interop with the Rust client (through the `herald` CLI, which is built on it): Python
publishes and Rust receives, Rust publishes and Python receives, for records and objects."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Iterator, List

import pytest
from conftest import Server, herald_bin

import herald
from herald import Priority


@pytest.fixture
def client(server: Server) -> Iterator[herald.Client]:
    with herald.connect(server.url, name="pytest-interop") as c:
        yield c


def rust(server: Server, *args: str) -> str:
    done = subprocess.run(
        [herald_bin(), *args, "--server", server.url],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_rust_cli_tail_receives_a_python_record(server: Server, client: herald.Client) -> None:
    tail = subprocess.Popen(
        [herald_bin(), "tail", "--json", "-n", "1", "--server", server.url, "-s", "interop.*"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            subs = [len(c["subscriptions"]) for c in client.monitor()["clients"]]
            if sum(subs) >= 1:
                break
            time.sleep(0.05)
        client.log(Priority.NOTICE, "interop.py", "from python", n=7, name="ünï", ok=True)
        client.flush()
        out, err = tail.communicate(timeout=20)
    finally:
        tail.kill()
    assert tail.returncode == 0, err
    line = json.loads(out.strip().splitlines()[-1])
    text = json.dumps(line)
    assert "interop.py" in text and "from python" in text
    record = line.get("record", line)
    assert record["subject"] == "interop.py"
    assert record["text"] == "from python"
    assert record["fields"] == {"n": 7, "name": "ünï", "ok": True}


def test_python_receives_what_rust_publishes(server: Server, client: herald.Client) -> None:
    with client.subscribe("interop.*") as sub:
        rust(server, "publish", "interop.rs", "cmd", "from rust", "-f", "n=7", "-p", "WARNING")
        rust(server, "log", "-s", "interop.rs.log", "-p", "ERROR", "-f", "ok=true", "a log")
        got = sub.wait_for(2, 20)
    message, log = got[0].record, got[1].record
    assert (message.kind, message.subject, message.type) == (
        herald.Kind.MESSAGE,
        "interop.rs",
        "cmd",
    )
    assert message.text == "from rust" and message.priority == Priority.WARNING
    assert message.fields == {"n": 7}
    assert (log.kind, log.subject, log.text) == (herald.Kind.LOG, "interop.rs.log", "a log")
    assert log.priority == Priority.ERROR and log.fields == {"ok": True}
    assert log.origin.host, "the Rust client puts its origin on logs"


def test_objects_both_ways(server: Server, client: herald.Client) -> None:
    client.declare_type("pump", [("rpm", "double", "speed"), ("state", "string", "")])
    client.set_info("hall.pump", "pump", rpm=1450.0, state="running")
    shown = json.loads(rust(server, "get", "hall.pump", "--json"))
    text = json.dumps(shown)
    assert "1450" in text and "running" in text
    changes: List[herald.InfoChange] = []
    with client.subscribe_info("hall\\..*") as sub:
        rust(server, "set", "hall.pump", "rpm=900.5")
        deadline = time.monotonic() + 20
        while len(changes) < 2 and time.monotonic() < deadline:
            d = sub.next(max(0.0, deadline - time.monotonic()))
            change = herald.InfoChange.from_delivered(d) if d else None
            if change is not None:
                changes.append(change)
    assert [c.reason for c in changes] == ["snapshot", "updated"]
    assert changes[1].object["attributes"] == {"rpm": 900.5, "state": "running"}
