//! OpenTelemetry logs in: `POST /v1/logs` on the HTTP port (OTLP/HTTP), the body an
//! `ExportLogsServiceRequest` in protobuf (`application/x-protobuf`) or JSON
//! (`application/json`), and `LogsService/Export` on the `otlp_grpc` port (OTLP/gRPC,
//! [`grpc`]). Each log record becomes a Herald log record ([`record`]), routed and archived
//! as if published here; records that cannot be (a record the checks refuse, a subject the
//! caller may not publish) are reported in the answer's `partial_success` and counted, the
//! rest go on.
//!
//! - [`proto`]: the OTLP messages; [`json`]: their JSON mapping;
//! - [`record`]: a log record as a Herald record;
//! - [`grpc`]: the gRPC port, which shares [`export`] with `/v1/logs`;
//! - [`stats`]: what both counted, the monitor's `otlp` section.

pub mod grpc;
pub mod json;
pub mod proto;
pub mod record;
pub mod stats;

pub use stats::OtlpStats;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use herald_proto::frame::RawRecord;
use herald_proto::time::now_nanos;
use herald_router::RouteContext;
use prost::Message;

use crate::auth::{Access, Operation};
use crate::http::error::HttpError;
use crate::shared::Shared;

/// How the request came, and so how the answer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Protobuf,
    Json,
}

/// `POST /v1/logs`.
pub async fn logs(
    State(shared): State<Arc<Shared>>,
    extensions: axum::http::Extensions,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // A body over `max_frame_bytes` is refused as every HTTP error is, in JSON
    // (`body_too_large`), not in the extractor's plain text.
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return HttpError::from(rejection).into_response(),
    };
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let encoding = match content_type.split(';').next().unwrap_or("").trim() {
        "application/x-protobuf" | "application/protobuf" => Encoding::Protobuf,
        "application/json" => Encoding::Json,
        other => {
            return unsupported(format!(
                "Content-Type `{other}`: send application/x-protobuf or application/json"
            ))
        }
    };
    if let Some(coding) = headers.get(CONTENT_ENCODING).and_then(|v| v.to_str().ok()) {
        if !coding.eq_ignore_ascii_case("identity") {
            return unsupported(format!(
                "Content-Encoding `{coding}`: send the body uncompressed (compression = none)"
            ));
        }
    }
    let request = match encoding {
        Encoding::Protobuf => proto::ExportLogsServiceRequest::decode(body.as_ref())
            .map_err(|err| format!("not an OTLP ExportLogsServiceRequest: {err}")),
        Encoding::Json => json::request(&body),
    };
    let request = match request {
        Ok(request) => request,
        Err(message) => {
            return HttpError::bad_request("bad_request", message).into_response();
        }
    };
    let access = crate::http::caller::access(&extensions);
    let partial_success = export(&shared, &access, &request).await;
    answer(encoding, partial_success)
}

/// Routes the records of one export request as `access` may publish them; returns what
/// could not be taken, as the answer's `partial_success` (`None` when all were).
pub async fn export(
    shared: &Shared,
    access: &Access,
    request: &proto::ExportLogsServiceRequest,
) -> Option<proto::ExportLogsPartialSuccess> {
    shared.otlp.requests.fetch_add(1, Ordering::Relaxed);
    let received = now_nanos();
    let mut records = Vec::new();
    let (mut rejected, mut first_error) = (0i64, String::new());
    record::each_record(request, received, |made| {
        let checked = access
            .check(Operation::Publish, &made.subject)
            .and_then(|()| {
                RawRecord::from_record(&made).map_err(|err| format!("record refused: {err}"))
            });
        match checked {
            Ok(raw) => records.push(raw),
            Err(why) => {
                rejected += 1;
                if first_error.is_empty() {
                    first_error = why;
                }
            }
        }
    });
    let mut route = RouteContext::default();
    let over_quota = crate::ingest::ingest(shared, &mut route, &records).await;
    let stats = &shared.otlp;
    let taken = records.len() as u64 - over_quota;
    stats.records.fetch_add(taken, Ordering::Relaxed);
    if over_quota > 0 {
        // Counted as dropped (reason quota) with the server's other losses.
        rejected += over_quota as i64;
        if first_error.is_empty() {
            first_error = format!("{over_quota} records refused over their source's quota");
        }
    }
    stats.rejected.fetch_add(rejected as u64, Ordering::Relaxed);
    (rejected > 0).then_some(proto::ExportLogsPartialSuccess {
        rejected_log_records: rejected,
        error_message: first_error,
    })
}

fn answer(encoding: Encoding, partial: Option<proto::ExportLogsPartialSuccess>) -> Response {
    match encoding {
        Encoding::Protobuf => {
            let body = proto::ExportLogsServiceResponse {
                partial_success: partial,
            }
            .encode_to_vec();
            ([(CONTENT_TYPE, "application/x-protobuf")], body).into_response()
        }
        Encoding::Json => {
            let body = match partial {
                None => serde_json::json!({}),
                Some(p) => serde_json::json!({"partialSuccess": {
                    "rejectedLogRecords": p.rejected_log_records.to_string(),
                    "errorMessage": p.error_message,
                }}),
            };
            axum::Json(body).into_response()
        }
    }
}

fn unsupported(message: String) -> Response {
    HttpError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        message,
    )
    .into_response()
}
