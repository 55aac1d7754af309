//! A syslog message as a Herald log record (docs/interfaces.md, "syslog"): severity to
//! priority, facility and structured data to fields, host, app-name and procid, msgid to
//! the origin, the subject from the configured template.

use herald_proto::value::Value;
use herald_proto::{Kind, Priority, Record};

use super::parse::{Message, FACILITIES, SEVERITIES};

/// Returns the priority of syslog severity `severity` (0 emergency … 7 debug).
pub fn priority(severity: u8) -> Priority {
    match severity {
        0 => Priority::Emergency,
        1 => Priority::Alert,
        2 => Priority::Critical,
        3 => Priority::Error,
        4 => Priority::Warning,
        5 => Priority::Notice,
        6 => Priority::Info,
        _ => Priority::Debug,
    }
}

/// A subject template (`syslog.{host}.{app}`), read once: its text and its placeholders in
/// order, so that a message's subject is made without looking for them again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    /// A placeholder: the part of the message it names, `None` for a name that is none
    /// (filled with `-`, as a missing value).
    Value(Option<Name>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Name {
    Host,
    App,
    Facility,
    Severity,
    Procid,
    Msgid,
}

impl Template {
    /// Reads `template`: `{name}` placeholders (`host`, `app`, `facility`, `severity`,
    /// `procid`, `msgid`); a `{` without its `}` is text, as is everything else.
    pub fn new(template: &str) -> Template {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_string()));
            }
            let name = match &rest[open + 1..open + close] {
                "host" => Some(Name::Host),
                "app" => Some(Name::App),
                "facility" => Some(Name::Facility),
                "severity" => Some(Name::Severity),
                "procid" => Some(Name::Procid),
                "msgid" => Some(Name::Msgid),
                _ => None,
            };
            parts.push(Part::Value(name));
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        Template { parts }
    }
}

/// Makes `record` the record of `message`: its subject from `template`, dated `received`
/// when the message had no time, its host `peer` when it named none. Its strings and field
/// list are reused (a listener keeps one record for all its messages: no allocation per
/// message once their sizes are reached).
pub fn fill(
    record: &mut Record,
    message: Message<'_>,
    template: &Template,
    received: i64,
    peer: &str,
) {
    let host = message.host.unwrap_or(peer);
    let facility = FACILITIES[usize::from(message.facility).min(FACILITIES.len() - 1)];
    let severity = SEVERITIES[usize::from(message.severity & 7)];
    record.subject.clear();
    for part in &template.parts {
        let value = match part {
            Part::Text(text) => {
                record.subject.push_str(text);
                continue;
            }
            Part::Value(name) => name.and_then(|name| match name {
                Name::Host => Some(host),
                Name::App => message.app,
                Name::Facility => Some(facility),
                Name::Severity => Some(severity),
                Name::Procid => message.procid,
                Name::Msgid => message.msgid,
            }),
        };
        // Each value one subject level; a missing one `-`.
        match value.filter(|v| !v.is_empty()) {
            Some(v) => crate::ingest::push_subject_level(&mut record.subject, v),
            None => record.subject.push('-'),
        }
    }
    record.kind = Kind::Log;
    record.time = message.time.unwrap_or(received);
    record.priority = priority(message.severity);
    record.text.clear();
    record.text.push_str(&message.text);
    record.type_name.clear();
    record.type_name.push_str("syslog");
    let origin = &mut record.origin;
    origin.host.clear();
    origin.host.push_str(host);
    origin.process.clear();
    // `app[pid]`, `app` or `[pid]` (pushed, not formatted: 4 % of a message's time).
    origin.process.push_str(message.app.unwrap_or_default());
    if let Some(pid) = message.procid {
        origin.process.push('[');
        origin.process.push_str(pid);
        origin.process.push(']');
    }
    origin.log_id.clear();
    origin.log_id.push_str(message.msgid.unwrap_or_default());
    // The facility field's strings are kept from one message to the next.
    record.fields.truncate(1);
    match record.fields.first_mut() {
        Some((name, Value::Str(value))) if name == "facility" => {
            value.clear();
            value.push_str(facility);
        }
        _ => {
            record.fields.clear();
            record
                .fields
                .push(("facility".into(), Value::Str(facility.into())));
        }
    }
    for (id, params) in message.data {
        let mut map: Vec<(String, Value)> = Vec::new();
        for (name, value) in params {
            // A name given again (RFC 5424 allows it) makes a list of its values.
            let value = Value::Str(value);
            match map.iter_mut().find(|(n, _)| n == name) {
                Some((_, Value::Array(values))) => values.push(value),
                Some((_, slot)) => {
                    let first = std::mem::replace(slot, Value::Array(Vec::new()));
                    *slot = Value::Array(vec![first, value]);
                }
                None => map.push((name.to_string(), value)),
            }
        }
        record.fields.push((id.to_string(), Value::Map(map)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syslog::parse::parse;

    fn record(message: Message<'_>, template: &str, received: i64, peer: &str) -> Record {
        let mut record = Record::new(Kind::Log, "");
        fill(
            &mut record,
            message,
            &Template::new(template),
            received,
            peer,
        );
        record
    }

    #[test]
    fn a_template_fills_known_names_and_keeps_the_rest_as_text() {
        let message = || parse(b"<13>1 - dv01.x app 7 - - text", 0).unwrap();
        let subject = |template: &str| record(message(), template, 0, "peer").subject;
        assert_eq!(subject("syslog.{host}.{app}"), "syslog.dv01_x.app");
        assert_eq!(subject("{procid}.{msgid}.{nope}"), "7.-.-");
        assert_eq!(subject("a.{severity}.{facility}"), "a.notice.user");
        assert_eq!(subject("open.{host"), "open.{host");
        assert_eq!(subject("plain"), "plain");
        assert_eq!(subject("{host}{app}"), "dv01_xapp");
        assert_eq!(
            record(parse(b"<13>x", 0).unwrap(), "s.{host}", 0, "10.0.0.9").subject,
            "s.10_0_0_9"
        );
    }

    #[test]
    fn a_reused_record_keeps_nothing_of_the_message_before() {
        let mut reused = Record::new(Kind::Log, "");
        let first = br#"<165>1 2026-11-27T03:58:01Z dv01 app 12 ID1 [a@1 k="v"] first"#;
        let template = Template::new("s.{host}");
        fill(&mut reused, parse(first, 0).unwrap(), &template, 0, "p");
        fill(
            &mut reused,
            parse(b"<11>just text", 0).unwrap(),
            &template,
            42,
            "p",
        );
        assert_eq!(
            reused,
            record(parse(b"<11>just text", 0).unwrap(), "s.{host}", 42, "p")
        );
    }

    #[test]
    fn maps_every_part_of_a_message() {
        let line = br#"<165>1 2026-11-27T03:58:01Z dv01.example.org evtslog 1234 ID47 [ex@32473 iut="3" iut="4" src="App"] hello"#;
        let message = parse(line, 0).unwrap();
        let record = record(message, "syslog.{host}.{app}.{facility}", 7, "10.0.0.9");
        assert_eq!(record.subject, "syslog.dv01_example_org.evtslog.local4");
        assert_eq!(record.priority, Priority::Notice);
        assert_eq!(record.origin.host, "dv01.example.org");
        assert_eq!(record.origin.process, "evtslog[1234]");
        assert_eq!(record.origin.log_id, "ID47");
        assert_eq!(record.text, "hello");
        assert_eq!(
            record.fields[0],
            ("facility".into(), Value::Str("local4".into()))
        );
        let Value::Map(data) = &record.fields[1].1 else {
            panic!("structured data is a map: {:?}", record.fields[1]);
        };
        assert_eq!(record.fields[1].0, "ex@32473");
        assert_eq!(
            data[0].1,
            Value::Array(vec![Value::Str("3".into()), Value::Str("4".into())])
        );
        assert_eq!(data[1], ("src".into(), Value::Str("App".into())));
        let raw = herald_proto::frame::RawRecord::new(record.to_bytes().into());
        assert!(raw.is_ok(), "{raw:?}");
    }

    #[test]
    fn missing_parts_come_from_the_receiver() {
        let message = parse(b"<11>just text", 0).unwrap();
        let record = record(message, "syslog.{host}.{app}.{msgid}", 42, "192.0.2.7");
        assert_eq!(record.subject, "syslog.192_0_2_7.-.-");
        assert_eq!((record.time, record.priority), (42, Priority::Error));
        assert_eq!(record.origin.host, "192.0.2.7");
    }

    #[test]
    fn severities_map_to_the_priorities_of_the_same_name() {
        let names: Vec<&str> = (0..8).map(|s| priority(s).name()).collect();
        assert_eq!(
            names,
            [
                "EMERGENCY",
                "ALERT",
                "CRITICAL",
                "ERROR",
                "WARNING",
                "NOTICE",
                "INFO",
                "DEBUG"
            ]
        );
    }
}
