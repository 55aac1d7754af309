"""Every case of every file in testdata/vectors decodes to its meaning and re-encodes exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from herald import Frame, FrameBuffer, decode_frame, encode_frame, frame_from_json, frame_to_json

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "vectors"


def _cases() -> List[Tuple[str, Dict[str, Any]]]:
    cases = []
    for path in sorted(VECTORS.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            cases.append((f"{path.stem}/{case['name']}", case))
    return cases


CASES = _cases()
IDS = [name for name, _ in CASES]


def _canonical(meaning: Any) -> str:
    # json.dumps tells 3 from 3.0, which a plain == would not.
    return json.dumps(meaning, sort_keys=True, ensure_ascii=False)


def test_vectors_found() -> None:
    assert len(CASES) >= 48, f"expected the shared vectors in {VECTORS}"


@pytest.mark.parametrize(("name", "case"), CASES, ids=IDS)
def test_decode_matches_meaning(name: str, case: Dict[str, Any]) -> None:
    frame = decode_frame(bytes.fromhex(case["hex"]))
    assert _canonical(frame_to_json(frame)) == _canonical(case["frame"])


@pytest.mark.parametrize(("name", "case"), CASES, ids=IDS)
def test_reencode_is_byte_exact(name: str, case: Dict[str, Any]) -> None:
    data = bytes.fromhex(case["hex"])
    assert encode_frame(decode_frame(data)).hex() == case["hex"]


# The meaning's objects have sorted keys (serde_json), so a frame whose attribute map is not
# sorted on the wire cannot be rebuilt byte for byte from its meaning: these info attributes
# are written run, started, detectors. Decoding and re-encoding them is still byte-exact.
UNSORTED_ON_THE_WIRE = {"info/info_update", "info/info_reply", "info/info_reply_part"}


@pytest.mark.parametrize(("name", "case"), CASES, ids=IDS)
def test_build_from_meaning_is_byte_exact(name: str, case: Dict[str, Any]) -> None:
    built = encode_frame(frame_from_json(case["frame"]))
    if name in UNSORTED_ON_THE_WIRE:
        assert built.hex() != case["hex"], "now sorted on the wire: drop it from the list"
        assert len(built) == len(bytes.fromhex(case["hex"]))
        assert _canonical(frame_to_json(decode_frame(built))) == _canonical(case["frame"])
    else:
        assert built.hex() == case["hex"]


@pytest.mark.parametrize(("name", "case"), CASES, ids=IDS)
def test_frame_buffer_any_split(name: str, case: Dict[str, Any]) -> None:
    data = bytes.fromhex(case["hex"])
    for cut in range(len(data) + 1):
        buffer = FrameBuffer()
        buffer.feed(data[:cut])
        if cut < len(data):
            assert buffer.next_raw() is None
        buffer.feed(data[cut:])
        assert buffer.next_raw() == data
        assert buffer.pending() == 0


def test_frame_buffer_stream_of_all_vectors() -> None:
    stream = b"".join(bytes.fromhex(case["hex"]) for _, case in CASES)
    buffer = FrameBuffer()
    frames: List[Frame] = []
    for start in range(0, len(stream), 7):
        buffer.feed(stream[start : start + 7])
        frames.extend(buffer)
    assert [frame_to_json(f) for f in frames] == [case["frame"] for _, case in CASES]


@pytest.mark.parametrize(("name", "case"), CASES, ids=IDS)
def test_msgpack_python_agrees(name: str, case: Dict[str, Any]) -> None:
    """The bodies are standard MessagePack that msgpack-python reads and re-packs identically."""
    msgpack = pytest.importorskip("msgpack")
    body = bytes.fromhex(case["hex"])[5:]
    if not body:
        return
    value = msgpack.unpackb(body, strict_map_key=False, raw=False)
    assert msgpack.packb(value, use_bin_type=True) == body
