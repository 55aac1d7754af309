//! `GET /monitor`: the monitor's snapshot as one JSON object — the data of the native
//! `MONITOR_REPLY` and of `herald monitor --json`, converted by the same function
//! ([`fields_json`]): server counters, rates, closes and drops by reason, every client
//! (browsers included) with its subscriptions, queue depths and drops, and the archive.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header::CACHE_CONTROL;
use axum::response::IntoResponse;
use axum::Json;
use herald_info::json::fields_json;

use crate::shared::Shared;

/// `GET /monitor`.
pub async fn get(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    let data = crate::snapshot::monitor_snapshot(&shared);
    (
        [(CACHE_CONTROL, "no-cache")],
        Json(serde_json::Value::Object(fields_json(&data))),
    )
}
