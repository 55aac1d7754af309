"""Tokens and permissions from the Python client, against a real `herald serve` with
identities made by `herald token new`: no token or an unknown one is refused at connect
(and not retried), a denied request raises ServerError ``denied`` while the connection goes
on, records the identity may not publish are refused and counted, and a subscription is
narrowed to what it may see."""

from __future__ import annotations

import pathlib
import subprocess
from typing import Dict, Iterator

import pytest
from conftest import Server, herald_bin, wait_until

import herald
from herald.errors import ConnectError, ServerError


def token(data_dir: pathlib.Path, name: str, *permissions: str) -> str:
    made = subprocess.run(
        [herald_bin(), "token", "new", name, "--data-dir", str(data_dir), *permissions],
        capture_output=True,
        text=True,
        check=True,
    )
    secret = made.stdout.strip()
    assert secret.startswith("hrd_"), made
    return secret


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    data = tmp_path_factory.mktemp("secured")
    tokens: Dict[str, str] = {
        "ops": token(data, "ops", "--publish", "*", "--subscribe", "*", "--admin"),
        "daq": token(data, "daq", "--publish", "DAQ.*", "--subscribe", "DAQ.*"),
    }
    server = Server(data)
    try:
        yield server, tokens
    finally:
        server.stop()


def test_no_token_or_an_unknown_one_is_refused_at_connect(secured: tuple) -> None:
    server, _ = secured
    for url in (server.url, server.url + "?token=hrd_nope"):
        with pytest.raises(ConnectError) as refused:
            herald.connect(url, name="stranger")
        assert "unauthorized" in str(refused.value)


def test_denied_requests_raise_and_the_connection_goes_on(secured: tuple) -> None:
    server, tokens = secured
    with herald.connect(f"{server.url}?token={tokens['daq']}", name="daq") as daq:
        with pytest.raises(ServerError) as denied:
            daq.monitor()
        assert denied.value.code == "denied"
        assert "identity `daq`" in denied.value.message
        daq.publish("DAQ.Readout", text="taken")
        daq.publish("Magnet.Current", text="not daq's")
        with pytest.raises(ServerError) as refused:
            daq.flush()
        assert refused.value.code == "denied"
        assert "`Magnet.Current`" in refused.value.message
        assert daq.refused_records == 1
        daq.publish("DAQ.Readout", text="still publishing")
        daq.flush()


def test_a_subscription_is_narrowed_to_what_the_identity_may_see(secured: tuple) -> None:
    server, tokens = secured
    with herald.connect(f"{server.url}?token={tokens['daq']}", name="daq-sub") as daq:
        seen = []
        daq.subscribe("*", callback=lambda d: seen.append(d.record.subject))
        with herald.connect(f"{server.url}?token={tokens['ops']}", name="ops") as ops:
            ops.publish("Magnet.Current", text="hidden")
            ops.publish("DAQ.Readout", text="seen")
            ops.flush()
        wait_until(lambda: seen == ["DAQ.Readout"], 10, "the one record daq may see")
