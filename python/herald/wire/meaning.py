"""A frame's meaning as plain JSON, exactly as ``herald-testkit``'s ``meaning.rs`` builds it.

Used to compare decoded frames with the shared test vectors (``testdata/vectors``), and to build
frames from those meanings.
"""

from __future__ import annotations

from typing import Any, Dict

from . import frames as fr
from .archive import (
    archive_reply_from_json,
    archive_reply_to_json,
    archive_request_from_json,
    archive_request_to_json,
)
from .filter import DeliveryOptions, Filter
from .info import (
    InfoReply,
    ObjectData,
    Selection,
    TypeData,
    info_request_from_json,
    info_request_to_json,
)
from .priority import Priority
from .record import Record
from .values import fields_from_json, fields_to_json

Json = Dict[str, Any]


def frame_to_json(f: fr.Frame) -> Json:  # noqa: C901 - one branch per frame type
    body: Json
    if isinstance(f, fr.Hello):
        body = {
            "version": f.version,
            "name": f.name,
            "token": f.token,
            "capabilities": list(f.capabilities),
            "heartbeat_ms": f.heartbeat_ms,
        }
        # Optional keys appear in the meaning only when the frame has them.
        if f.producer:
            body["producer"] = f.producer
    elif isinstance(f, fr.Welcome):
        body = {
            "version": f.version,
            "server": f.server,
            "heartbeat_ms": f.heartbeat_ms,
            "max_frame_bytes": f.max_frame_bytes,
            "connection": f.connection,
        }
    elif isinstance(f, fr.Publish):
        body = {
            "ack_id": f.ack_id,
            "ack": int(f.ack),
            "ack_name": f.ack.name.lower(),
            "records": [r.to_json() for r in f.records],
        }
        if f.first_seq:
            body["first_seq"] = f.first_seq
    elif isinstance(f, fr.Ack):
        body = {
            "ack_id": f.ack_id,
            "level": int(f.level),
            "level_name": f.level.name.lower(),
            "count": f.count,
        }
    elif isinstance(f, fr.Deliver):
        body = {"entries": [_deliver_entry_json(e) for e in f.entries]}
    elif isinstance(f, fr.Gap):
        body = {
            "subscription": f.subscription,
            "count": f.count,
            "first_seq": f.first_seq,
            "last_seq": f.last_seq,
            "by_priority": [
                {"priority": int(p), "priority_name": Priority(p).name, "count": n}
                for p, n in f.by_priority
            ],
        }
    elif isinstance(f, fr.Subscribe):
        body = {
            "cid": f.cid,
            "subscription": f.subscription,
            "filter": f.filter.to_json(),
            "options": f.options.to_json(),
        }
    elif isinstance(f, fr.Unsubscribe):
        body = {"cid": f.cid, "subscription": f.subscription}
    elif isinstance(f, (fr.Ok, fr.Monitor, fr.Reload)):
        body = {"cid": f.cid}
    elif isinstance(f, (fr.MonitorReply, fr.ReloadReply)):
        body = {"cid": f.cid, "data": fields_to_json(f.data)}
    elif isinstance(f, fr.Info):
        body = {"cid": f.cid, "request": info_request_to_json(f.request)}
    elif isinstance(f, fr.InfoReplyFrame):
        body = {
            "cid": f.cid,
            "objects": [None if o is None else o.to_json() for o in f.reply.objects],
            "types": [t.to_json() for t in f.reply.types],
            "more": f.more,
        }
    elif isinstance(f, fr.InfoSubscribe):
        body = {"cid": f.cid, "subscription": f.subscription, "selection": f.selection.to_json()}
    elif isinstance(f, fr.Query):
        body = {"cid": f.cid, "query": archive_request_to_json(f.request)}
    elif isinstance(f, fr.QueryReply):
        body = {
            "cid": f.cid,
            "reply": archive_reply_to_json(f.reply),
            "skipped": f.skipped,
            "more": f.more,
        }
    elif isinstance(f, (fr.Ping, fr.Pong)):
        body = {}
    else:
        body = {"cid": f.cid, "code": f.code, "message": f.message}
    return {"type": fr.frame_type(f).name, **body}


def _deliver_entry_json(e: fr.DeliverEntry) -> Json:
    entry: Json = {
        "subscription": e.subscription,
        "seq": e.seq,
        "received": e.received,
        "record": e.record.to_json(),
    }
    # A route's numbered entry (an array of 6) carries its producer and number, and one for
    # queue groups (an array of 7) the groups too.
    if e.producer or e.groups:
        entry["producer"] = e.producer
        entry["pseq"] = e.pseq
    if e.groups:
        entry["groups"] = list(e.groups)
    return entry


def frame_from_json(m: Json) -> fr.Frame:  # noqa: C901
    """Builds a frame from its meaning (the inverse of :func:`frame_to_json`)."""
    kind = m["type"]
    if kind == "HELLO":
        return fr.Hello(
            name=m["name"],
            version=m["version"],
            token=m["token"],
            capabilities=list(m["capabilities"]),
            heartbeat_ms=m["heartbeat_ms"],
            producer=m.get("producer", 0),
        )
    if kind == "WELCOME":
        return fr.Welcome(
            m["version"], m["server"], m["heartbeat_ms"], m["max_frame_bytes"], m["connection"]
        )
    if kind == "PUBLISH":
        records = [Record.from_json(r) for r in m["records"]]
        return fr.Publish(m["ack_id"], fr.AckLevel(m["ack"]), records, m.get("first_seq", 0))
    if kind == "ACK":
        return fr.Ack(m["ack_id"], fr.AckLevel(m["level"]), m["count"])
    if kind == "DELIVER":
        entries = [
            fr.DeliverEntry(
                e["subscription"],
                e["seq"],
                e["received"],
                Record.from_json(e["record"]),
                e.get("producer", 0),
                e.get("pseq", 0),
                list(e.get("groups", [])),
            )
            for e in m["entries"]
        ]
        return fr.Deliver(entries)
    if kind == "GAP":
        by_priority = [(Priority(p["priority"]), p["count"]) for p in m["by_priority"]]
        return fr.Gap(m["subscription"], m["count"], m["first_seq"], m["last_seq"], by_priority)
    if kind == "SUBSCRIBE":
        return fr.Subscribe(
            m["cid"],
            m["subscription"],
            Filter.from_json(m["filter"]),
            DeliveryOptions.from_json(m["options"]),
        )
    if kind == "UNSUBSCRIBE":
        return fr.Unsubscribe(m["cid"], m["subscription"])
    if kind == "OK":
        return fr.Ok(m["cid"])
    if kind == "MONITOR":
        return fr.Monitor(m["cid"])
    if kind == "MONITOR_REPLY":
        return fr.MonitorReply(m["cid"], fields_from_json(m["data"]))
    if kind == "RELOAD":
        return fr.Reload(m["cid"])
    if kind == "RELOAD_REPLY":
        return fr.ReloadReply(m["cid"], fields_from_json(m["data"]))
    if kind == "INFO":
        return fr.Info(m["cid"], info_request_from_json(m["request"]))
    if kind == "INFO_REPLY":
        objects = [None if o is None else ObjectData.from_json(o) for o in m["objects"]]
        types = [TypeData.from_json(t) for t in m["types"]]
        return fr.InfoReplyFrame(m["cid"], InfoReply(objects, types), m.get("more", False))
    if kind == "INFO_SUBSCRIBE":
        return fr.InfoSubscribe(m["cid"], m["subscription"], Selection.from_json(m["selection"]))
    if kind == "QUERY":
        return fr.Query(m["cid"], archive_request_from_json(m["query"]))
    if kind == "QUERY_REPLY":
        return fr.QueryReply(
            m["cid"],
            archive_reply_from_json(m["reply"]),
            m.get("skipped", 0),
            m.get("more", False),
        )
    if kind == "PING":
        return fr.Ping()
    if kind == "PONG":
        return fr.Pong()
    if kind == "ERROR":
        return fr.Error(m["cid"], m["code"], m["message"])
    raise ValueError(f"unknown frame type {kind!r}")
