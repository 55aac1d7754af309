"""INFO answers (and archive buckets and values) larger than a frame come in parts that the
client joins; a request larger than a frame is refused at the call and never sent. Against a
real `herald serve` (one with a 64 KiB frame limit, so that a list of 100,000 objects is some
70 frames), and a fake server that drops the connection in the middle of an answer."""

from __future__ import annotations

import pathlib
import socket
import threading
import time
from typing import Iterator, List, Union

import pytest
from conftest import Server, wait_until

import herald
from herald import Kind, Record
from herald.connection import Connection
from herald.wire.frames import (
    Ack,
    FrameBuffer,
    FrameType,
    Hello,
    Info,
    InfoReplyFrame,
    Pong,
    Publish,
    QueryReply,
    Welcome,
    decode_frame,
    encode_frame,
)
from herald.wire.info import InfoReply, ObjectData, Update, UpdateMode

SMALL_FRAME = 64 * 1024
COUNT = 100_000
SECOND = 1_000_000_000


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with a 64 KiB frame limit holding COUNT objects `Load.Object000000`…"""
    server = Server(
        tmp_path_factory.mktemp("parts"), settings={"max_frame_bytes": str(SMALL_FRAME)}
    )
    try:
        with herald.connect(server.url, name="loader") as client:
            assert client.max_frame_bytes == SMALL_FRAME
            client.declare_type("Probe", [("n", "u32", "a number")])
        create_objects(server.address, COUNT)
        yield server
    finally:
        server.stop()


def create_objects(address: str, count: int) -> None:
    """Creates objects `Load.Object<i>` of type Probe, pipelined on a socket of its own: the
    INFO frames go out in large writes while the replies are read and counted (any ERROR
    fails; the server's PINGs are answered), instead of one round trip per object."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(encode_frame(Hello(name="pipelined-loader")))
        buffer = FrameBuffer()
        welcome = None
        while welcome is None:
            buffer.feed(sock.recv(65536))
            welcome = buffer.next_frame()
        assert isinstance(welcome, Welcome), welcome
        now = time.time_ns()
        failed: List[BaseException] = []
        sending = threading.Lock()

        def write() -> None:
            try:
                chunk = []
                for i in range(count):
                    update = Update(UpdateMode.CREATE, name(i), "Probe", now, {"n": i})
                    chunk.append(encode_frame(Info(i + 1, update)))
                    if len(chunk) == 2000 or i == count - 1:
                        with sending:
                            sock.sendall(b"".join(chunk))
                        chunk = []
            except BaseException as err:  # reported by the reading side
                failed.append(err)

        writer = threading.Thread(target=write, name="loader-writer", daemon=True)
        writer.start()
        answered = 0
        while answered < count and not failed:
            data = sock.recv(1 << 20)
            assert data, f"the server closed the connection after {answered} replies"
            buffer.feed(data)
            while True:
                raw = buffer.next_raw()
                if raw is None:
                    break
                if raw[4] == FrameType.INFO_REPLY:
                    answered += 1
                elif raw[4] == FrameType.PING:
                    with sending:
                        sock.sendall(encode_frame(Pong()))
                else:
                    pytest.fail(f"creating objects: {decode_frame(raw)}")
        writer.join(30)
        assert not failed, failed


def name(i: int) -> str:
    return f"Load.Object{i:06d}"


def count_parts(client: herald.Client) -> List[bool]:
    """Records the ``more`` flag of every INFO_REPLY or QUERY_REPLY the client's reader joins
    from now on."""
    conn = client._conn
    seen: List[bool] = []
    join = conn._part

    def counting(frame: Union[InfoReplyFrame, QueryReply]) -> None:
        seen.append(frame.more)
        join(frame)

    conn._part = counting  # type: ignore[method-assign]
    return seen


def test_a_list_of_100000_objects_arrives_whole(loaded: Server) -> None:
    with herald.connect(loaded.url, name="lister") as client:
        parts = count_parts(client)
        objects = client.list_info(r"Load\..*", timeout=60)
        assert len(objects) == COUNT
        assert [o["name"] for o in objects] == [name(i) for i in range(COUNT)]
        assert objects[12345]["attributes"] == {"n": 12345}
        assert {o["type"] for o in objects} == {"Probe"}
        # The answer was many frames, each under the limit, all joined.
        assert len(parts) > 20 and parts[-1] is False and all(parts[:-1])
        assert client._conn._partial == {}
        # The connection stayed up: no failover, and it goes on answering.
        assert not client.closed and client.failovers == 0
        assert client.get_info(name(99_999)) == objects[-1]
        assert any(c["name"] == "lister" for c in client.monitor()["clients"])


def test_a_get_whose_answer_is_larger_than_a_frame(loaded: Server) -> None:
    names = [name(i) for i in range(0, COUNT, 40)] + ["Load.Missing"]
    with herald.connect(loaded.url, name="getter") as client:
        parts = count_parts(client)
        found = client.get_infos(names, timeout=30)
        assert len(parts) > 1 and parts[-1] is False
        assert [o and o["name"] for o in found] == names[:-1] + [None]
        assert found[1] is not None and found[1]["attributes"] == {"n": 40}


def test_a_timed_out_answer_leaves_nothing_behind(loaded: Server) -> None:
    with herald.connect(loaded.url, name="impatient") as client:
        with pytest.raises(herald.TimeoutError):
            client.list_info(r"Load\..*", timeout=0.001)
        # The next answer comes after the rest of the abandoned one, which was dropped.
        assert len(client.list_info(r"Load\.Object0000.*", timeout=30)) == 100
        assert client._conn._partial == {}
        assert not client.closed and client.failovers == 0


def test_a_request_larger_than_a_frame_is_refused_at_the_call(server: Server) -> None:
    with herald.connect(server.url, name="asker") as client:
        limit = client.max_frame_bytes
        names = [f"Many.Name{i:07d}" for i in range(limit // 16)]  # 17 bytes each, encoded
        with pytest.raises(herald.RequestTooLargeError) as caught:
            client.get_infos(names)
        error = caught.value
        assert isinstance(error, ValueError)
        assert (error.frame, error.max) == ("INFO", limit) and error.size > limit
        assert f"INFO request of {error.size} bytes" in str(error)
        assert f"maximum frame of {limit} bytes" in str(error)
        # Nothing was sent (the server would have closed the connection): it goes on.
        assert not client.closed and client.failovers == 0
        assert client._conn._waiters == {}
        half = names[: len(names) // 2]
        assert client.get_infos(half) == [None] * len(half)
        assert client.monitor()["clients"]


# ---- a server that drops the connection in the middle of an answer -------------------------


class PartingServer:
    """A fake server: its first connection answers an INFO with one part (``more``) and then
    closes; later connections answer whole. PUBLISH frames (a flush) are acknowledged."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        self.socks: List[socket.socket] = []
        threading.Thread(target=self._serve, name="parting-server", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            self.socks.append(sock)
            threading.Thread(
                target=self._session, args=(sock, self.connections), daemon=True
            ).start()

    def _session(self, sock: socket.socket, number: int) -> None:
        buffer = FrameBuffer()
        obj = ObjectData("Part.One", "T", 1, 1, {})
        try:
            while True:
                frame = None
                while frame is None:
                    data = sock.recv(65536)
                    if not data:
                        return
                    buffer.feed(data)
                    frame = buffer.next_frame()
                if isinstance(frame, Publish):
                    sock.sendall(encode_frame(Ack(frame.ack_id, frame.ack, len(frame.records))))
                elif isinstance(frame, Hello):
                    sock.sendall(encode_frame(Welcome(1, "parting", 5000, 1 << 20, number)))
                elif isinstance(frame, Info):
                    reply = InfoReply([obj], [])
                    if number == 1:
                        sock.sendall(encode_frame(InfoReplyFrame(frame.cid, reply, more=True)))
                        time.sleep(0.2)  # the part is read before the connection ends
                        sock.close()
                        return
                    sock.sendall(encode_frame(InfoReplyFrame(frame.cid, reply)))
        except OSError:
            return

    def close(self) -> None:
        self.listener.close()
        for sock in self.socks:
            sock.close()


@pytest.fixture
def parting() -> Iterator[PartingServer]:
    server = PartingServer()
    try:
        yield server
    finally:
        server.close()


def test_a_failover_in_the_middle_of_an_answer_drops_its_parts(parting: PartingServer) -> None:
    with herald.connect(f"herald://{parting.address}", name="parted") as client:
        conn: Connection = client._conn
        parts = count_parts(client)
        with pytest.raises(herald.ConnectionClosed, match="failing over"):
            client.list_info(timeout=10)
        assert parts == [True]
        deadline = time.monotonic() + 10
        while client.failovers < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert client.failovers == 1 and conn._partial == {}
        # The new connection's answer is its own, not joined to the lost part.
        assert [o["name"] for o in client.list_info(timeout=10)] == ["Part.One"]
        assert conn._partial == {}


def test_archive_buckets_and_values_larger_than_a_frame_arrive_whole(
    tmp_path: pathlib.Path,
) -> None:
    """Buckets and values at an instant too many for a frame come as several QUERY_REPLY
    parts; the client joins them into the whole answer."""
    server = Server(tmp_path, settings={"max_frame_bytes": "16384"})
    fields = 60
    try:
        with herald.connect(server.url, name="archiver") as client:
            start = time.time_ns() - 600 * SECOND
            for i in range(600):
                values = {f"field{f:02d}": i * f for f in range(fields)}
                client.publish_record(
                    Record(
                        kind=Kind.INFO,
                        subject="Wide.Signal",
                        time=start + i * SECOND,
                        fields=values,
                    )
                )
            for n in range(300):
                client.publish_record(
                    Record(kind=Kind.INFO, subject=f"Wide.N{n}", time=start, fields={"n": n})
                )
            client.flush()
            end = start + 600 * SECOND
            wait_until(
                lambda: len(client.samples("Wide.Signal", start, end)) == 600,
                10,
                "600 samples archived",
            )
            parts = count_parts(client)
            buckets = client.buckets("Wide.Signal", start, end, 300)
            assert len(buckets) == 300
            assert [b["count"] for b in buckets] == [2] * 300
            assert buckets[-1]["fields"][f"field{fields - 1:02d}"]["max"] == 599 * (fields - 1)
            assert len(parts) > 10 and parts[-1] is False and all(parts[:-1])
            parts.clear()
            # 300 names fit a request; their values do not fit one answer (each part holds
            # the frame's limit less 4 KiB of records).
            names = [f"Wide.N{n}" for n in range(300)]
            values = client.values_at(names, start + SECOND)
            assert [v["n"] if v else None for v in values] == list(range(300))
            assert len(parts) > 1 and parts[-1] is False
    finally:
        server.stop()
