//! OTLP/JSON (the protobuf messages' JSON mapping, as the OTLP specification has it: field
//! names in lowerCamelCase, 64-bit integers as strings or numbers, `traceId` and `spanId` in
//! hex, other bytes in base64) read into the same messages as the protobuf encoding.

use serde_json::Value as Json;

use super::proto::{
    Any, AnyValue, ArrayValue, ExportLogsServiceRequest, InstrumentationScope, KeyValue,
    KeyValueList, LogRecord, Resource, ResourceLogs, ScopeLogs,
};

/// Reads an `ExportLogsServiceRequest` in JSON.
///
/// # Errors
/// What is not OTLP/JSON, naming the field.
pub fn request(body: &[u8]) -> Result<ExportLogsServiceRequest, String> {
    let json: Json = serde_json::from_slice(body).map_err(|err| format!("not JSON: {err}"))?;
    let resource_logs = list(&json, "resourceLogs")?
        .iter()
        .map(resource_logs)
        .collect::<Result<_, _>>()?;
    Ok(ExportLogsServiceRequest { resource_logs })
}

/// Returns the array at `key` (either spelling), empty when missing.
fn list<'a>(json: &'a Json, key: &str) -> Result<&'a [Json], String> {
    match field(json, key) {
        None | Some(Json::Null) => Ok(&[]),
        Some(Json::Array(items)) => Ok(items),
        Some(_) => Err(format!("`{key}` is not an array")),
    }
}

/// Returns the member `key` in lowerCamelCase or its snake_case spelling.
fn field<'a>(json: &'a Json, key: &str) -> Option<&'a Json> {
    json.get(key).or_else(|| {
        let snake: String = key
            .chars()
            .flat_map(|c| {
                if c.is_ascii_uppercase() {
                    vec!['_', c.to_ascii_lowercase()]
                } else {
                    vec![c]
                }
            })
            .collect();
        json.get(snake)
    })
}

fn text(json: &Json, key: &str) -> Result<String, String> {
    match field(json, key) {
        None | Some(Json::Null) => Ok(String::new()),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("`{key}` is not a string")),
    }
}

fn integer(json: &Json, key: &str) -> Result<i64, String> {
    match field(json, key) {
        None | Some(Json::Null) => Ok(0),
        Some(Json::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|u| u as i64))
            .ok_or_else(|| format!("`{key}` is not an integer")),
        Some(Json::String(s)) => s
            .parse::<i64>()
            .or_else(|_| s.parse::<u64>().map(|u| u as i64))
            .map_err(|_| format!("`{key}` is not an integer")),
        Some(_) => Err(format!("`{key}` is not an integer")),
    }
}

fn hex(json: &Json, key: &str) -> Result<Vec<u8>, String> {
    let digits = text(json, key)?;
    if digits.len() % 2 != 0 {
        return Err(format!("`{key}` is not hex"));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| format!("`{key}` is not hex"))
        })
        .collect()
}

fn resource_logs(json: &Json) -> Result<ResourceLogs, String> {
    let resource = match field(json, "resource") {
        Some(resource) if !resource.is_null() => Some(Resource {
            attributes: attributes(resource)?,
        }),
        _ => None,
    };
    let scope_logs = list(json, "scopeLogs")?
        .iter()
        .map(|scope_logs| {
            let scope = match field(scope_logs, "scope") {
                Some(scope) if !scope.is_null() => Some(InstrumentationScope {
                    name: text(scope, "name")?,
                    version: text(scope, "version")?,
                }),
                _ => None,
            };
            let log_records = list(scope_logs, "logRecords")?
                .iter()
                .map(log_record)
                .collect::<Result<_, _>>()?;
            Ok::<_, String>(ScopeLogs { scope, log_records })
        })
        .collect::<Result<_, _>>()?;
    Ok(ResourceLogs {
        resource,
        scope_logs,
    })
}

fn log_record(json: &Json) -> Result<LogRecord, String> {
    Ok(LogRecord {
        time_unix_nano: integer(json, "timeUnixNano")? as u64,
        observed_time_unix_nano: integer(json, "observedTimeUnixNano")? as u64,
        severity_number: i32::try_from(integer(json, "severityNumber")?)
            .map_err(|_| "`severityNumber` is out of range".to_string())?,
        severity_text: text(json, "severityText")?,
        body: match field(json, "body") {
            Some(body) if !body.is_null() => Some(any_value(body)?),
            _ => None,
        },
        attributes: attributes(json)?,
        trace_id: hex(json, "traceId")?,
        span_id: hex(json, "spanId")?,
        event_name: text(json, "eventName")?,
    })
}

fn attributes(json: &Json) -> Result<Vec<KeyValue>, String> {
    list(json, "attributes")?.iter().map(key_value).collect()
}

fn key_value(json: &Json) -> Result<KeyValue, String> {
    Ok(KeyValue {
        key: text(json, "key")?,
        value: match field(json, "value") {
            Some(value) if !value.is_null() => Some(any_value(value)?),
            _ => None,
        },
    })
}

fn any_value(json: &Json) -> Result<AnyValue, String> {
    let value = if let Some(s) = field(json, "stringValue") {
        Some(Any::String(
            s.as_str()
                .ok_or("`stringValue` is not a string")?
                .to_string(),
        ))
    } else if let Some(b) = field(json, "boolValue") {
        Some(Any::Bool(
            b.as_bool().ok_or("`boolValue` is not a boolean")?,
        ))
    } else if field(json, "intValue").is_some() {
        Some(Any::Int(integer(json, "intValue")?))
    } else if let Some(d) = field(json, "doubleValue") {
        let d = match d {
            Json::String(s) => s.parse().map_err(|_| "`doubleValue` is not a number")?,
            other => other.as_f64().ok_or("`doubleValue` is not a number")?,
        };
        Some(Any::Double(d))
    } else if let Some(array) = field(json, "arrayValue") {
        let values = list(array, "values")?
            .iter()
            .map(any_value)
            .collect::<Result<_, _>>()?;
        Some(Any::Array(ArrayValue { values }))
    } else if let Some(kvlist) = field(json, "kvlistValue") {
        let values = list(kvlist, "values")?
            .iter()
            .map(key_value)
            .collect::<Result<_, _>>()?;
        Some(Any::KvList(KeyValueList { values }))
    } else if let Some(bytes) = field(json, "bytesValue") {
        let text = bytes.as_str().ok_or("`bytesValue` is not a string")?;
        Some(Any::Bytes(
            base64(text).ok_or("`bytesValue` is not base64")?,
        ))
    } else {
        None
    };
    Ok(AnyValue { value })
}

/// Decodes standard base64 (padding optional).
fn base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut count) = (0u32, 0);
    for c in text.bytes().filter(|c| *c != b'=') {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    Some(out)
}
