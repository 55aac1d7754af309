//! The "frame" half of a test vector: a frame's meaning as plain JSON that any language can
//! build from its own decoded frame and compare (docs/protocol.md, "Test vectors").
//!
//! Records are shown fully decoded, with every record field present (defaults included) so
//! that a reader sees what an absent key means. Field values map onto JSON as: bool, integer,
//! float (always written with a `.` or an exponent), string, `{"bytes": "<hex>"}`,
//! `{"time": <ns>}`, array, object (in wire order).

use herald_proto::archive::{ArchiveReply, ArchiveRequest, Bucket, Cursor, StoredRecord};
use herald_proto::frame::{DeliverEntry, GapNotice, Hello, Publish, Subscribe, Welcome};
use herald_proto::info::{InfoRequest, ObjectData, SelectionData, TypeData, UpdateMode};
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::value::Field;
use herald_proto::DeliveryOptions;
use herald_proto::{AckLevel, Filter, Frame, Kind, Origin, Priority, PrioritySet, Record, Value};
use serde_json::{json, Map, Value as Json};

use super::to_hex;

/// Returns the meaning of `frame` as JSON: `{"type": "<FRAME NAME>", ...}`.
///
/// # Panics
/// If a record inside a `PUBLISH`, `DELIVER` or `QUERY_REPLY` does not decode, which `Frame::decode` has
/// already ruled out.
pub fn frame_to_json(frame: &Frame) -> Json {
    let mut object = Map::new();
    object.insert("type".into(), json!(frame.frame_type().name()));
    let body = match frame {
        Frame::Hello(hello) => hello_json(hello),
        Frame::Welcome(welcome) => welcome_json(welcome),
        Frame::Publish(publish) => publish_json(publish),
        Frame::Ack(ack) => json!({
            "ack_id": ack.ack_id,
            "level": ack.level as u8,
            "level_name": ack_level_name(ack.level),
            "count": ack.count,
        }),
        Frame::Deliver(entries) => json!({
            "entries": entries.iter().map(deliver_entry_json).collect::<Vec<_>>(),
        }),
        Frame::Gap(gap) => gap_json(gap),
        Frame::Subscribe(subscribe) => subscribe_json(subscribe),
        Frame::Unsubscribe { cid, subscription } => {
            json!({ "cid": cid, "subscription": subscription })
        }
        Frame::Ok { cid } | Frame::Monitor { cid } | Frame::Reload { cid } => json!({ "cid": cid }),
        Frame::MonitorReply { cid, data } | Frame::ReloadReply { cid, data } => {
            json!({ "cid": cid, "data": fields_json(data) })
        }
        Frame::Info { cid, request } => {
            json!({ "cid": cid, "request": info_request_json(request) })
        }
        Frame::InfoReply { cid, reply, more } => json!({
            "cid": cid,
            "objects": reply.objects.iter().map(|o| o.as_ref().map(object_json)).collect::<Vec<_>>(),
            "types": reply.types.iter().map(type_json).collect::<Vec<_>>(),
            "more": more,
        }),
        Frame::InfoSubscribe {
            cid,
            subscription,
            selection,
        } => json!({
            "cid": cid,
            "subscription": subscription,
            "selection": selection_json(selection),
        }),
        Frame::Query { cid, request } => json!({ "cid": cid, "query": query_json(request) }),
        Frame::QueryReply {
            cid,
            reply,
            skipped,
            more,
        } => json!({
            "cid": cid,
            "reply": query_reply_json(reply),
            "skipped": skipped,
            "more": more,
        }),
        Frame::Ping | Frame::Pong => json!({}),
        Frame::Error(error) => json!({
            "cid": error.cid,
            "code": error.code.as_str(),
            "message": error.message,
        }),
        other => panic!(
            "no JSON meaning defined for {} frames",
            other.frame_type().name()
        ),
    };
    if let Json::Object(fields) = body {
        object.extend(fields);
    }
    Json::Object(object)
}

fn hello_json(hello: &Hello) -> Json {
    let mut json = json!({
        "version": hello.version,
        "name": hello.name,
        "token": hello.token,
        "capabilities": hello.capabilities,
        "heartbeat_ms": hello.heartbeat_ms,
    });
    // Optional keys appear in the meaning only when the frame has them.
    if hello.producer != 0 {
        json["producer"] = json!(hello.producer);
    }
    json
}

fn welcome_json(welcome: &Welcome) -> Json {
    json!({
        "version": welcome.version,
        "server": welcome.server,
        "heartbeat_ms": welcome.heartbeat_ms,
        "max_frame_bytes": welcome.max_frame_bytes,
        "connection": welcome.connection,
    })
}

fn publish_json(publish: &Publish) -> Json {
    let records: Vec<Json> = publish
        .records
        .iter()
        .map(|raw| record_json(&decode_record(&raw.bytes, "PUBLISH")))
        .collect();
    let mut json = json!({
        "ack_id": publish.ack_id,
        "ack": publish.ack as u8,
        "ack_name": ack_level_name(publish.ack),
        "records": records,
    });
    if publish.first_seq != 0 {
        json["first_seq"] = json!(publish.first_seq);
    }
    json
}

fn deliver_entry_json(entry: &DeliverEntry) -> Json {
    let mut json = json!({
        "subscription": entry.subscription,
        "seq": entry.seq,
        "received": entry.received,
        "record": record_json(&decode_record(&entry.record.bytes, "DELIVER")),
    });
    if entry.producer != 0 || !entry.groups.is_empty() {
        json["producer"] = json!(entry.producer);
        json["pseq"] = json!(entry.pseq);
    }
    if !entry.groups.is_empty() {
        json["groups"] = json!(entry.groups);
    }
    json
}

fn gap_json(gap: &GapNotice) -> Json {
    let by_priority: Vec<Json> = gap
        .by_priority
        .iter()
        .map(|(priority, count)| {
            json!({
                "priority": *priority as u8,
                "priority_name": priority.name(),
                "count": count,
            })
        })
        .collect();
    json!({
        "subscription": gap.subscription,
        "count": gap.count,
        "first_seq": gap.first_seq,
        "last_seq": gap.last_seq,
        "by_priority": by_priority,
    })
}

fn subscribe_json(subscribe: &Subscribe) -> Json {
    json!({
        "cid": subscribe.cid,
        "subscription": subscribe.subscription,
        "filter": filter_to_json(&subscribe.filter),
        "options": options_to_json(&subscribe.options),
    })
}

/// Returns delivery options with every option present; `null` means the server's default.
pub fn options_to_json(options: &DeliveryOptions) -> Json {
    json!({
        "policy": options.policy.name(),
        "max_records": options.max_records,
        "max_bytes": options.max_bytes,
        "block_timeout_ms": options.block_timeout_ms,
        "protected": options.protected.map(|p| p.name()),
        "latest_per_second": options.latest_per_second,
        "group": options.group.as_deref(),
    })
}

fn info_request_json(request: &InfoRequest) -> Json {
    match request {
        InfoRequest::Declare(data) => json!({ "op": "declare", "type": type_json(data) }),
        InfoRequest::Update {
            mode,
            name,
            type_name,
            time,
            attributes,
        } => json!({
            "op": "update",
            "mode": match mode { UpdateMode::Create => "create", UpdateMode::Update => "update", UpdateMode::Upsert => "upsert" },
            "name": name,
            "type": type_name,
            "time": time,
            "attributes": fields_json(attributes),
        }),
        InfoRequest::Delete { name, time } => json!({ "op": "delete", "name": name, "time": time }),
        InfoRequest::Get(names) => json!({ "op": "get", "names": names }),
        InfoRequest::List(selection) => {
            json!({ "op": "list", "selection": selection_json(selection) })
        }
        InfoRequest::Types => json!({ "op": "types" }),
    }
}

/// Returns an information object's meaning.
pub fn object_json(object: &ObjectData) -> Json {
    json!({
        "name": object.name,
        "type": object.type_name,
        "time": object.time,
        "version": object.version,
        "attributes": fields_json(&object.attributes),
    })
}

fn type_json(data: &TypeData) -> Json {
    json!({
        "name": data.name,
        "base": data.base,
        "description": data.description,
        "attributes": data.attributes.iter().map(|a| json!({
            "name": a.name, "type": a.attr_type, "description": a.description,
        })).collect::<Vec<_>>(),
    })
}

fn selection_json(selection: &SelectionData) -> Json {
    json!({ "match": selection.name_regex, "type": selection.types, "combine": if selection.any { "or" } else { "and" } })
}

/// Returns an archive query's meaning: `op` (`samples`, `buckets`, `logs`, `at`) and its
/// arguments, every one present (`null` when absent).
fn query_json(request: &ArchiveRequest) -> Json {
    match request {
        ArchiveRequest::Samples(q) => json!({
            "op": "samples",
            "name": q.name,
            "from": q.from,
            "to": q.to,
            "after": q.after.map(cursor_json),
            "limit": q.limit,
        }),
        ArchiveRequest::Buckets(q) => json!({
            "op": "buckets",
            "name": q.name,
            "from": q.from,
            "to": q.to,
            "buckets": q.buckets,
            "field": q.field,
        }),
        ArchiveRequest::Logs(q) => {
            json!({
                "op": "logs",
                "from": q.from,
                "to": q.to,
                "priority_bits": q.priorities.bits(),
                "priorities": priority_names(q.priorities),
                "subject": q.subject,
                "host": q.host,
                "process": q.process,
                "text": q.text,
                "after": q.after.map(cursor_json),
                "limit": q.limit,
            })
        }
        ArchiveRequest::At(q) => json!({ "op": "at", "names": q.names, "time": q.time }),
    }
}

/// Returns an archive answer's meaning: `op` (`page`, `buckets`, `at`) and its contents.
fn query_reply_json(reply: &ArchiveReply) -> Json {
    match reply {
        ArchiveReply::Page(page) => json!({
            "op": "page",
            "records": page.records.iter().map(stored_json).collect::<Vec<_>>(),
            "next": page.next.map(cursor_json),
        }),
        ArchiveReply::Buckets(buckets) => json!({
            "op": "buckets",
            "buckets": buckets.iter().map(bucket_json).collect::<Vec<_>>(),
        }),
        ArchiveReply::At(found) => json!({
            "op": "at",
            "values": found.iter().map(|s| s.as_ref().map(stored_json)).collect::<Vec<_>>(),
        }),
    }
}

fn cursor_json(cursor: Cursor) -> Json {
    json!({ "time": cursor.time, "seq": cursor.seq })
}

fn stored_json(stored: &StoredRecord) -> Json {
    json!({
        "seq": stored.seq,
        "received": stored.received,
        "record": record_json(&decode_record(&stored.record, "QUERY_REPLY")),
    })
}

/// Returns a bucket's meaning; its field statistics stay a list, in wire order.
fn bucket_json(bucket: &Bucket) -> Json {
    let float = |v: f64| value_json(&Value::Float(v));
    let fields: Vec<Json> = bucket
        .fields
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "count": s.count,
                "min": float(s.min),
                "max": float(s.max),
                "mean": float(s.mean),
                "first": float(s.first),
                "last": float(s.last),
            })
        })
        .collect();
    json!({
        "start": bucket.start,
        "end": bucket.end,
        "count": bucket.count,
        "fields": fields,
    })
}

fn decode_record(bytes: &[u8], frame: &str) -> Record {
    Record::from_bytes(bytes)
        .unwrap_or_else(|err| panic!("a record in a decoded {frame} frame does not decode: {err}"))
}

/// Returns the wire name of an acknowledgement level (`none`, `received`, `stored`).
pub fn ack_level_name(level: AckLevel) -> &'static str {
    match level {
        AckLevel::None => "none",
        AckLevel::Received => "received",
        AckLevel::Stored => "stored",
    }
}

/// Returns a record's meaning with every field present; `reply_to` and `id` are `null`
/// when absent.
pub fn record_json(record: &Record) -> Json {
    json!({
        "kind": record.kind.name(),
        "subject": record.subject,
        "type": record.type_name,
        "time": record.time,
        "priority": record.priority as u8,
        "priority_name": record.priority.name(),
        "audience": record.audience,
        "origin": origin_json(&record.origin),
        "text": record.text,
        "fields": fields_json(&record.fields),
        "reply_to": record.reply_to,
        "id": record.id,
    })
}

/// Returns the parts of an origin that are present (as on the wire, empty parts are absent).
pub fn origin_json(origin: &Origin) -> Json {
    let texts = origin.named_texts();
    let mut object = Map::new();
    for (name, text) in texts {
        if !text.is_empty() {
            object.insert(name.into(), json!(text));
        }
    }
    if let Some(line) = origin.line {
        object.insert("line".into(), json!(line));
    }
    if let Some(level) = origin.stack_level {
        object.insert("stack_level".into(), json!(level));
    }
    Json::Object(object)
}

/// Returns named values as a JSON object.
pub fn fields_json(fields: &[Field]) -> Json {
    Json::Object(
        fields
            .iter()
            .map(|(name, value)| (name.clone(), value_json(value)))
            .collect(),
    )
}

/// Returns a typed value as JSON. Non-finite floats, which JSON cannot write as numbers,
/// become `{"float": "NaN" | "inf" | "-inf"}`.
pub fn value_json(value: &Value) -> Json {
    match value {
        Value::Bool(v) => json!(v),
        Value::Int(v) => json!(v),
        Value::UInt(v) => json!(v),
        Value::Float(v) => serde_json::Number::from_f64(*v)
            .map(Json::Number)
            .unwrap_or_else(|| json!({ "float": v.to_string() })),
        Value::Str(v) => json!(v),
        Value::Bytes(v) => json!({ "bytes": to_hex(v) }),
        Value::Time(v) => json!({ "time": v }),
        Value::Array(items) => Json::Array(items.iter().map(value_json).collect()),
        Value::Map(fields) => fields_json(fields),
    }
}

/// Returns a filter's meaning with every dimension present: open patterns are `"*"`, an
/// open priority set lists every priority, open kinds list every kind.
pub fn filter_to_json(filter: &Filter) -> Json {
    let kinds: Vec<&str> = [Kind::Log, Kind::Message, Kind::Info]
        .into_iter()
        .filter(|k| filter.kinds.contains(*k))
        .map(Kind::name)
        .collect();
    json!({
        "subject": filter.subject.as_str(),
        "type": filter.type_name.as_str(),
        "priority_bits": filter.priorities.bits(),
        "priorities": priority_names(filter.priorities),
        "audience": filter.audience,
        "kinds": kinds,
    })
}

/// Returns the names of the priorities in `set`, ascending.
fn priority_names(set: PrioritySet) -> Vec<&'static str> {
    ALL_PRIORITIES
        .into_iter()
        .filter(|p| set.contains(*p))
        .map(Priority::name)
        .collect()
}
