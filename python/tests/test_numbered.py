"""Numbered records (docs/protocol.md, Numbered records): the client's HELLO names a producer
id of its own, kept across failovers; its PUBLISH frames with records carry the number of
their first record, counted from 1 across connections; after a failover it resends the
frames the lost connection had not acknowledged byte for byte. Checked at the codec, against
a fake server that keeps every frame it receives, and against a real `herald serve`, which
says (monitor ``duplicates``) when a number of this producer comes to it again."""

from __future__ import annotations

import socket
import threading
from typing import Iterator, List

import pytest
from conftest import Server, resend, wait_until

import herald
from herald import Kind, Record
from herald.dialer import new_producer_id
from herald.outbox import Outbox, publish_frame
from herald.wire import frames as fr
from herald.wire.frames import (
    Ack,
    AckLevel,
    FrameBuffer,
    Hello,
    Ping,
    Pong,
    Publish,
    Welcome,
    decode_frame,
    encode_frame,
)
from herald.wire.msgpack_codec import DecodeError

U64_MAX = (1 << 64) - 1


def _record(i: int) -> Record:
    return Record(kind=Kind.MESSAGE, subject="numbered.x", time=1_700_000_000 + i, fields={"i": i})


# ---- the codec ----------------------------------------------------------------------------


def test_hello_carries_the_producer_after_the_required_keys() -> None:
    data = encode_frame(Hello(name="n", producer=U64_MAX))
    assert data[5] == 0x86  # a map of 6
    assert data.endswith(b"\x05\xcf" + b"\xff" * 8)  # key 5, then the id as a uint64
    hello = decode_frame(data)
    assert isinstance(hello, Hello) and hello.producer == U64_MAX
    plain = encode_frame(Hello(name="n"))
    assert plain[5] == 0x85  # no producer: the five required keys only
    assert isinstance(decode_frame(plain), Hello)


def test_hello_still_needs_its_five_keys() -> None:
    # HELLO {0: 1, 1: "n", 2: "", 3: [], 5: 7}: heartbeat_ms (key 4) is missing.
    body = b"\x85\x00\x01\x01\xa1n\x02\xa0\x03\x90\x05\x07"
    frame = (len(body) + 1).to_bytes(4, "big") + b"\x01" + body
    with pytest.raises(DecodeError, match="missing required field `heartbeat_ms`"):
        decode_frame(frame)
    unknown = encode_frame(Hello(name="n", producer=3))[:-2] + b"\x06\x03"
    with pytest.raises(DecodeError, match="unknown field 6 in HELLO"):
        decode_frame(unknown)


def test_the_client_writes_numbered_publish_frames() -> None:
    records = [_record(i) for i in range(3)]
    data = publish_frame(9, AckLevel.RECEIVED, [r.to_bytes() for r in records], 41)
    assert data == encode_frame(Publish(9, AckLevel.RECEIVED, records, first_seq=41))
    assert data[5] == 0x94 and data.endswith(b"\x29")  # an array of 4 ending in 41
    frame = decode_frame(data)
    assert isinstance(frame, Publish)
    assert (frame.ack_id, frame.first_seq, frame.records) == (9, 41, records)
    flush = publish_frame(10, AckLevel.RECEIVED, [])
    assert flush.hex() == "0000000510930a0190"  # a flush stays in the 3-element form
    assert decode_frame(flush) == Publish(10, AckLevel.RECEIVED, [])


def test_numbers_start_at_one() -> None:
    data = publish_frame(1, AckLevel.RECEIVED, [_record(0).to_bytes()], 1)
    with pytest.raises(DecodeError, match="numbered from 1"):
        decode_frame(data[:-1] + b"\x00")
    # PUBLISH [1, 1, [], 1, 2]: nothing is defined after first_seq.
    with pytest.raises(DecodeError, match="PUBLISH must be an array of 3 or 4, found 5"):
        decode_frame(b"\x00\x00\x00\x07\x10\x95\x01\x01\x90\x01\x02")


def test_deliver_entries_of_four_six_or_seven() -> None:
    entry = fr.DeliverEntry(0, 77, 5, _record(1), producer=U64_MAX, pseq=1001)
    data = encode_frame(fr.Deliver([entry, fr.DeliverEntry(1, 78, 5, _record(2))]))
    frame = decode_frame(data)
    assert isinstance(frame, fr.Deliver)
    assert [(e.producer, e.pseq) for e in frame.entries] == [(U64_MAX, 1001), (0, 0)]
    assert encode_frame(frame) == data
    # An entry of 5 (the producer without its number) is no entry.
    body = b"\x91\x95\x00\x01\x02" + _record(1).to_bytes() + b"\x07"
    with pytest.raises(DecodeError, match="DELIVER entry must be an array of 4, 6 or 7, found 5"):
        decode_frame((len(body) + 1).to_bytes(4, "big") + b"\x12" + body)


def test_the_outbox_numbers_batches_on() -> None:
    outbox = Outbox()
    assert [outbox.number(3), outbox.number(0), outbox.number(1), outbox.number(2)] == [1, 0, 4, 5]
    assert outbox.next_seq == 7


def test_producer_ids_are_random_and_not_zero() -> None:
    ids = {new_producer_id() for _ in range(100)}
    assert len(ids) == 100 and all(0 < i <= U64_MAX for i in ids)


# ---- a fake server that keeps every frame ------------------------------------------------


class KeepingServer:
    """Answers HELLO with WELCOME and PING with PONG, and keeps every frame each connection
    sends (its bytes). The first connection acknowledges no PUBLISH and is closed once it
    holds ``drop_after`` PUBLISH frames; later ones acknowledge each at once."""

    def __init__(self, drop_after: int) -> None:
        self.drop_after = drop_after
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections: List[List[bytes]] = []
        self._socks: List[socket.socket] = []
        threading.Thread(target=self._serve, name="keeping-server", daemon=True).start()

    def hellos(self) -> List[Hello]:
        """The first frame of each connection (a HELLO)."""
        first = [decode_frame(kept[0]) for kept in self.connections if kept]
        return [hello for hello in first if isinstance(hello, Hello)]

    def publishes(self, number: int) -> List[bytes]:
        """The PUBLISH frames connection ``number`` (0, 1, …) sent, as bytes."""
        return [raw for raw in self.connections[number] if raw[4] == fr.FrameType.PUBLISH]

    def _serve(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self._socks.append(sock)
            kept: List[bytes] = []
            self.connections.append(kept)
            first = len(self.connections) == 1
            threading.Thread(target=self._session, args=(sock, kept, first), daemon=True).start()

    def _session(self, sock: socket.socket, kept: List[bytes], first: bool) -> None:
        buffer = FrameBuffer()
        try:
            while True:
                raw = buffer.next_raw()
                if raw is None:
                    data = sock.recv(65536)
                    if not data:
                        return
                    buffer.feed(data)
                    continue
                kept.append(raw)
                frame = decode_frame(raw)
                if isinstance(frame, Hello):
                    sock.sendall(encode_frame(Welcome(1, "keeping", 5000, 1 << 20, len(kept))))
                elif isinstance(frame, Ping):
                    sock.sendall(encode_frame(Pong()))
                elif isinstance(frame, Publish) and not first:
                    sock.sendall(encode_frame(Ack(frame.ack_id, frame.ack, len(frame.records))))
                elif isinstance(frame, Publish) and len(self.publishes(0)) >= self.drop_after:
                    sock.close()
                    return
        except OSError:
            return

    def close(self) -> None:
        self.listener.close()
        for sock in self._socks:
            sock.close()


@pytest.fixture
def keeping() -> Iterator[KeepingServer]:
    server = KeepingServer(drop_after=2)
    try:
        yield server
    finally:
        server.close()


def _first_seq(raw: bytes) -> int:
    frame = decode_frame(raw)
    assert isinstance(frame, Publish)
    return frame.first_seq


def test_the_same_producer_and_the_same_bytes_after_a_failover(keeping: KeepingServer) -> None:
    with herald.connect(f"herald://{keeping.address}", name="numbering") as client:
        producer = client.producer
        assert 0 < producer <= U64_MAX
        client.publish_encoded([_record(0).to_bytes(), _record(1).to_bytes()])  # numbers 1, 2
        client.publish_encoded([_record(2).to_bytes()])  # number 3
        # The server takes both frames, acknowledges neither and closes: the client comes
        # back (to the same server, the only one of the URL) and resends them.
        wait_until(lambda: client.failovers == 1, 10, "the reconnection")
        client.flush()
        client.publish("numbered.y")
        client.flush()
        assert client.producer == producer
        hellos = keeping.hellos()
        assert [h.producer for h in hellos] == [producer, producer]
        lost, resumed = keeping.publishes(0), keeping.publishes(1)
        assert [_first_seq(raw) for raw in lost] == [1, 3]
        assert resumed[:2] == lost, "the unacknowledged frames are resent byte for byte"
        # Then the first flush, an empty PUBLISH in the 3-element form, and the second, which
        # is the open batch: record number 4.
        assert [_first_seq(raw) for raw in resumed[2:]] == [0, 4]
        assert resumed[2][5] == 0x93 and resumed[3][5] == 0x94


# ---- a real server -------------------------------------------------------------------------


def test_a_server_knows_the_numbers_of_the_clients_records(server: Server) -> None:
    with herald.connect(server.url, name="reader") as reader:
        sub = reader.subscribe("numbered.*")
        with herald.connect(server.url, name="numbered") as client:
            for i in range(3):
                client.publish("numbered.x", fields={"i": i})  # numbers 1, 2, 3
            client.flush()
            producer = client.producer
        assert [d.fields["i"] for d in sub.wait_for(3, 10)] == [0, 1, 2]
        assert reader.monitor()["duplicates"] == 0
        # Number 3 again, under the client's id, is a duplicate; number 4 is new.
        ack = resend(server.address, producer, 3, [_record(3), _record(4)])
        assert ack.count == 2, "a duplicate counts as taken"
        assert reader.monitor()["duplicates"] == 1
        got = sub.next(10)
        assert got is not None and got.fields["i"] == 4
        with pytest.raises(herald.TimeoutError):
            sub.next(0.3)
        # Another producer's number 1 is its own.
        resend(server.address, producer ^ 1 or 2, 1, [_record(5)])
        assert reader.monitor()["duplicates"] == 1


def test_a_flush_alone_is_not_numbered(server: Server) -> None:
    with herald.connect(server.url) as client:
        client.flush()
        client.publish("numbered.z")
        client.flush()
        assert resend(server.address, client.producer, 1, [_record(0)]).count == 1
        assert client.monitor()["duplicates"] == 1, "the first record published was number 1"
