//! `PUT /info/{name}`: creates or updates an object from a JSON body
//!
//! ```json
//! {"type": "RunInfo", "attributes": {"run": 42, "start": "2026-11-20T02:00:00Z"},
//!  "mode": "upsert", "time": "2026-11-20T02:00:01.5Z"}
//! ```
//!
//! `type` is needed to create; `mode` is `create`, `update` or `upsert` (default); `time` is
//! the producer's time, ISO 8601 text or integer nanoseconds (default: now). Attribute
//! values are read as the type declares them (`herald_info::json`), then checked by the
//! store like any other update.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{Path, State};
use axum::Json;
use herald_info::json::{attributes_from_json, time_from_json};
use herald_proto::info::{InfoRequest, UpdateMode};
use herald_proto::time::now_nanos;
use serde::Deserialize;
use serde_json::{Map, Value as JsonValue};

use super::info::{first_object, object_name};
use super::{apply, HttpError};
use crate::shared::Shared;

/// What a `PUT` may do to an object that does or does not exist.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Only a new object; every attribute must be given.
    Create,
    /// Only an existing object; the given attributes replace theirs.
    Update,
    /// Either (the default).
    #[default]
    Upsert,
}

impl From<Mode> for UpdateMode {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Create => UpdateMode::Create,
            Mode::Update => UpdateMode::Update,
            Mode::Upsert => UpdateMode::Upsert,
        }
    }
}

/// The body of `PUT /info/{name}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PutBody {
    /// The type; needed to create, and must be the object's when updating.
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    /// The attributes to set (none: only the time and version change).
    #[serde(default)]
    pub attributes: Map<String, JsonValue>,
    /// `create`, `update` or `upsert`.
    #[serde(default)]
    pub mode: Mode,
    /// The producer's time: ISO 8601 text or integer nanoseconds; default now.
    pub time: Option<JsonValue>,
}

/// `PUT /info/{name}`: the object after the change.
pub async fn put(
    State(shared): State<Arc<Shared>>,
    path: Result<Path<String>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<JsonValue>, HttpError> {
    let name = object_name(path)?;
    let body: PutBody = serde_json::from_slice(&body?)
        .map_err(|err| HttpError::bad_request("bad_json", format!("bad JSON body: {err}")))?;
    let time = match &body.time {
        Some(time) => time_from_json(time)
            .map_err(|err| HttpError::bad_request("bad_time", err.to_string()))?,
        None => now_nanos(),
    };
    // Read the values as the object's type declares them: the type given, or the type of
    // the object as it is. Types never change once declared, so this stays right.
    let attributes = shared.info.read(|store| {
        let existing = store.get(&name).map(|object| object.type_name.as_str());
        let type_name = body.type_name.as_deref().or(existing);
        attributes_from_json(store.registry(), type_name, &body.attributes)
    })?;
    let request = InfoRequest::Update {
        mode: body.mode.into(),
        name,
        type_name: body.type_name,
        time,
        attributes,
    };
    let reply = apply(&shared, request).await?;
    first_object(reply.objects)
}
