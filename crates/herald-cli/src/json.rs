//! JSON forms of records and gap notices for `--json` output; values (and information
//! objects) take the one JSON form of `herald_info::json`.

use herald_client::{Delivered, Interruption};
use herald_info::json::record_json;
use herald_proto::frame::GapNotice;
use serde_json::{json, Map, Value as Json};

/// Converts a delivered record.
pub fn delivered(delivered: &Delivered) -> Json {
    record_json(delivered.record(), delivered.seq, delivered.received)
}

/// Converts a gap notice.
pub fn gap(gap: &GapNotice) -> Json {
    let by_priority: Map<String, Json> = gap
        .by_priority
        .iter()
        .map(|(p, n)| (p.name().to_string(), json!(n)))
        .collect();
    json!({
        "gap": { "count": gap.count, "first_seq": gap.first_seq, "last_seq": gap.last_seq, "by_priority": by_priority, "member": gap.member }
    })
}

/// Converts the notice of a failover.
pub fn interrupted(notice: &Interruption) -> Json {
    json!({
        "interrupted": {
            "lost": notice.lost,
            "resumed": notice.resumed,
            "down_ms": notice.down.as_millis() as u64,
        }
    })
}
