"""Queue groups from Python: members of a group share the records, each record once."""

from __future__ import annotations

import pytest
from conftest import Server

import herald
from herald.wire.filter import DeliveryOptions


def test_two_members_share_every_record_once(server: Server) -> None:
    client = herald.connect(server.url, name="publisher")
    a = herald.connect(server.url, name="a")
    b = herald.connect(server.url, name="b")
    with client, a, b:
        options = DeliveryOptions(group="workers")
        subs = [c.subscribe("job.*", options=options) for c in (a, b)]
        for i in range(2_000):
            # Every text its own: identical records would collapse as a log storm.
            client.publish("job.x", type="job", text=f"job {i}")
        client.flush()
        seen: list[int] = []
        for sub in subs:
            while True:
                try:
                    delivered = sub.next(1.0)
                except herald.TimeoutError:
                    break
                assert delivered is not None
                seen.append(delivered.seq)
        assert len(seen) == 2_000, "every record reached one member"
        assert len(set(seen)) == 2_000, "none reached both"
        assert all(sub.lost == 0 for sub in subs)


def test_a_bad_group_name_is_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        DeliveryOptions(group="")
    with pytest.raises(ValueError, match="control character"):
        DeliveryOptions(group="a\nb")
