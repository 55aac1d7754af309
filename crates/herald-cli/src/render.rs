//! Plain-text lines for people, in the style of the ACS logging client: ISO 8601 time with
//! milliseconds, priority, subject, origin, text, then fields.

use herald_client::{Delivered, Interruption};
use herald_proto::frame::GapNotice;
use herald_proto::time::format_iso8601;
use herald_proto::{Origin, Record};

/// Renders one delivered record as one line.
pub fn line(delivered: &Delivered) -> String {
    record_line(delivered.record())
}

/// Renders one record as one line.
pub fn record_line(record: &Record) -> String {
    let mut line = format!(
        "{} {:<9} {} {}",
        format_iso8601(record.time),
        record.priority.name(),
        record.subject,
        origin(&record.origin)
    );
    if !record.type_name.is_empty() {
        line.push_str(&format!(" [{}]", record.type_name));
    }
    if !record.text.is_empty() {
        line.push(' ');
        // One record, one line: embedded newlines are shown, not obeyed.
        line.push_str(&record.text.replace('\n', "\\n"));
    }
    for (name, value) in &record.fields {
        line.push_str(&format!(" {name}={}", value.to_text()));
    }
    line
}

fn origin(origin: &Origin) -> String {
    let mut parts = Vec::new();
    for part in [&origin.host, &origin.process, &origin.thread] {
        if !part.is_empty() {
            parts.push(part.as_str());
        }
    }
    let mut text = if parts.is_empty() {
        "-".to_string()
    } else {
        parts.join("/")
    };
    if !origin.file.is_empty() {
        text.push_str(&format!(" {}", origin.file));
        if let Some(line) = origin.line {
            text.push_str(&format!(":{line}"));
        }
    }
    text
}

/// Renders an information-object change as one line: time, why, name, type, version,
/// attributes.
pub fn info_line(delivered: &Delivered) -> String {
    let Some(change) = herald_client::InfoChange::from_delivered(delivered) else {
        return line(delivered);
    };
    let object = &change.object;
    let mut line = format!(
        "{} {:<8} {} ({}) v{}",
        format_iso8601(object.time),
        change.reason,
        object.name,
        object.type_name,
        object.version
    );
    for (name, value) in &object.attributes {
        line.push_str(&format!(" {name}={}", value.to_text()));
    }
    line
}

/// Renders a gap notice as one line.
pub fn gap(gap: &GapNotice) -> String {
    let by_priority: Vec<String> = gap
        .by_priority
        .iter()
        .map(|(p, n)| format!("{p} {n}"))
        .collect();
    // Another server lost them on its way here: a cluster member, or a mirror's source.
    let route = gap
        .member
        .as_ref()
        .map_or(String::new(), |m| format!(" on the way from server {m}"));
    format!(
        "-- gap: {} records lost{route} (seq {}..{}: {}) --",
        gap.count,
        gap.first_seq,
        gap.last_seq,
        by_priority.join(", ")
    )
}

/// The line that tells of a failover.
pub fn interrupted(notice: &Interruption) -> String {
    format!(
        "-- interrupted: connection to {} lost; subscribed again on {} after {} ms; records \
         published in between were not delivered here --",
        notice.lost,
        notice.resumed,
        notice.down.as_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_proto::{Kind, Priority, Record, Value};

    #[test]
    fn renders_one_line_per_record() {
        let record = Record {
            time: 1_763_604_000_123_000_000,
            priority: Priority::Warning,
            origin: Origin {
                host: "dv01".into(),
                process: "mountd".into(),
                ..Origin::default()
            },
            text: "encoder fault\nretrying".into(),
            fields: vec![("axis".into(), Value::from("az"))],
            ..Record::new(Kind::Log, "ANTENNA.DV01.Mount")
        };
        let delivered = Delivered::new(1, 7, 0, record.to_bytes().into()).unwrap();
        assert_eq!(
            line(&delivered),
            "2025-11-20T02:00:00.123Z WARNING   ANTENNA.DV01.Mount dv01/mountd encoder fault\\nretrying axis=az"
        );
    }
}
