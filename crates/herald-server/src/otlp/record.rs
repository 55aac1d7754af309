//! An OTLP log record as a Herald record (docs/interfaces.md, "OpenTelemetry logs"):
//! severity number to priority, `service.name` and `host.name` (and the `code.*`
//! attributes) to the origin, attributes to typed fields, trace and span ids kept.

use herald_proto::value::{Field, Value};
use herald_proto::{Kind, Priority, Record};

use super::proto::{Any, AnyValue, ExportLogsServiceRequest, KeyValue, LogRecord};

/// Calls `found` with the record made of each log record of `request`, in order (each
/// under its resource's and scope's [`Context`]), dated `received` when it has no time.
pub fn each_record(
    request: &ExportLogsServiceRequest,
    received: i64,
    mut found: impl FnMut(Record),
) {
    for resource_logs in &request.resource_logs {
        let attributes = resource_logs
            .resource
            .as_ref()
            .map_or(&[][..], |r| &r.attributes[..]);
        for scope_logs in &resource_logs.scope_logs {
            let scope = scope_logs.scope.as_ref().map_or("", |s| s.name.as_str());
            let context = Context::new(attributes, scope);
            for log in &scope_logs.log_records {
                found(record(log, &context, received));
            }
        }
    }
}

/// Returns the priority of OTLP severity number `number` (1–24), or of `text` when the
/// number is unspecified (0).
pub fn priority(number: i32, text: &str) -> Priority {
    match number {
        1..=4 => Priority::Trace,
        5..=8 => Priority::Debug,
        9 => Priority::Info,
        10..=12 => Priority::Notice,
        13..=16 => Priority::Warning,
        17..=20 => Priority::Error,
        21 => Priority::Critical,
        22 => Priority::Alert,
        23..=24 => Priority::Emergency,
        _ => match text.to_ascii_uppercase().as_str() {
            "WARN" => Priority::Warning,
            "FATAL" => Priority::Critical,
            other => other.parse().unwrap_or(Priority::Info),
        },
    }
}

/// The parts of a resource and scope that every record under them shares.
#[derive(Debug, Default)]
pub struct Context {
    /// `service.name`.
    pub service: String,
    /// `host.name`.
    pub host: String,
    /// The other resource attributes, as fields.
    pub fields: Vec<Field>,
    /// The instrumentation scope's name.
    pub scope: String,
}

impl Context {
    /// Returns the context of `attributes` (a resource's) and `scope`.
    pub fn new(attributes: &[KeyValue], scope: &str) -> Context {
        let mut context = Context {
            scope: scope.to_string(),
            ..Context::default()
        };
        for attribute in attributes {
            let value = value_of(attribute.value.as_ref());
            match (attribute.key.as_str(), value) {
                ("service.name", Value::Str(s)) => context.service = s,
                ("host.name", Value::Str(s)) => context.host = s,
                (key, value) => context.fields.push((key.to_string(), value)),
            }
        }
        context
    }
}

/// Returns `log` as a record, dated `received` when it has no time.
pub fn record(log: &LogRecord, context: &Context, received: i64) -> Record {
    let service = if context.service.is_empty() {
        "unknown_service"
    } else {
        &context.service
    };
    let mut subject = String::from("otel.");
    crate::ingest::push_subject_level(&mut subject, service);
    let time = [log.time_unix_nano, log.observed_time_unix_nano]
        .into_iter()
        .find(|t| *t > 0)
        .map_or(received, |t| i64::try_from(t).unwrap_or(i64::MAX));
    let mut record = Record {
        time,
        priority: priority(log.severity_number, &log.severity_text),
        text: match log.body.as_ref().map(|b| value_of(Some(b))) {
            None => String::new(),
            Some(Value::Str(s)) => s,
            Some(other) => herald_info::json::value_json(&other).to_string(),
        },
        ..Record::new(Kind::Log, subject)
    };
    record.type_name = if log.event_name.is_empty() {
        "otel".into()
    } else {
        log.event_name.clone()
    };
    record.origin.host = context.host.clone();
    record.origin.process = context.service.clone();
    record.origin.context = context.scope.clone();
    record.fields = context.fields.clone();
    for attribute in &log.attributes {
        let value = value_of(attribute.value.as_ref());
        match (attribute.key.as_str(), value) {
            ("code.filepath" | "code.file.path", Value::Str(s)) => record.origin.file = s,
            ("code.function" | "code.function.name", Value::Str(s)) => record.origin.routine = s,
            ("code.lineno" | "code.line.number", Value::Int(n)) => {
                record.origin.line = u64::try_from(n).ok();
            }
            ("thread.name", Value::Str(s)) => record.origin.thread = s,
            ("thread.id", Value::Int(n)) if record.origin.thread.is_empty() => {
                record.origin.thread = n.to_string();
            }
            (key, value) => match record.fields.iter_mut().find(|(k, _)| k == key) {
                Some((_, old)) => *old = value,
                None => record.fields.push((key.to_string(), value)),
            },
        }
    }
    for (name, id) in [("trace_id", &log.trace_id), ("span_id", &log.span_id)] {
        if !id.is_empty() {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            record.fields.push((name.into(), Value::Str(hex)));
        }
    }
    record
}

/// Returns an OTLP value as a Herald value (nothing set: an empty string).
pub fn value_of(value: Option<&AnyValue>) -> Value {
    match value.and_then(|v| v.value.as_ref()) {
        None => Value::Str(String::new()),
        Some(Any::String(s)) => Value::Str(s.clone()),
        Some(Any::Bool(b)) => Value::Bool(*b),
        Some(Any::Int(n)) => Value::Int(*n),
        Some(Any::Double(d)) => Value::Float(*d),
        Some(Any::Bytes(b)) => Value::Bytes(b.clone()),
        Some(Any::Array(array)) => {
            Value::Array(array.values.iter().map(|v| value_of(Some(v))).collect())
        }
        Some(Any::KvList(list)) => Value::Map(
            list.values
                .iter()
                .map(|kv| (kv.key.clone(), value_of(kv.value.as_ref())))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_numbers_map_to_priorities() {
        let got: Vec<&str> = [1, 5, 9, 10, 13, 17, 21, 22, 23, 24]
            .iter()
            .map(|n| priority(*n, "").name())
            .collect();
        assert_eq!(
            got,
            [
                "TRACE",
                "DEBUG",
                "INFO",
                "NOTICE",
                "WARNING",
                "ERROR",
                "CRITICAL",
                "ALERT",
                "EMERGENCY",
                "EMERGENCY"
            ]
        );
        assert_eq!(priority(0, "warn"), Priority::Warning);
        assert_eq!(priority(0, "ERROR"), Priority::Error);
        assert_eq!(priority(0, ""), Priority::Info);
    }
}
