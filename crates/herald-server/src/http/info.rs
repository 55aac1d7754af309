//! Reading and deleting information objects: `GET /info/{name}` (JSON or XML),
//! `GET /info?match=&type=&combine=`, `DELETE /info/{name}`, and `GET /info-types`.

use std::sync::Arc;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::Json;
use herald_info::error::quote;
use herald_info::json::{object_json, type_json};
use herald_info::xml::object_xml;
use herald_info::{check_name, InfoError, Selection};
use herald_proto::info::{InfoRequest, ObjectData, SelectionData};
use herald_proto::time::now_nanos;
use serde::Deserialize;
use serde_json::Value as JsonValue;

use super::{apply, HttpError};
use crate::shared::Shared;

/// The content type of XML answers.
pub const XML_CONTENT_TYPE: &str = "application/xml; charset=utf-8";

/// How `GET /info/{name}` answers.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// `{name, type, time, time_ns, version, attributes}`.
    #[default]
    Json,
    /// `<obj name type time><attr name descr type><v>…</v></attr></obj>`.
    Xml,
}

/// The query of `GET /info/{name}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetQuery {
    /// `json` (default) or `xml`.
    #[serde(default)]
    pub format: Format,
}

/// How the two parts of a selection combine.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Combine {
    /// Both must match (the default).
    #[default]
    And,
    /// Either may match.
    Or,
}

/// The query of `GET /info`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Regular expression matched against whole names.
    #[serde(rename = "match")]
    pub name_regex: Option<String>,
    /// Type selection: `T`, `T+`, `!T`, `!T+`.
    #[serde(rename = "type")]
    pub types: Option<String>,
    /// `and` (default) or `or`.
    #[serde(default)]
    pub combine: Combine,
}

/// Returns the object's name from the path, checked.
pub(super) fn object_name(path: Result<Path<String>, PathRejection>) -> Result<String, HttpError> {
    let Path(name) = path?;
    check_name(&name)?;
    Ok(name)
}

/// `GET /info/{name}`: the object as JSON, or as XML with `?format=xml`.
pub async fn get(
    State(shared): State<Arc<Shared>>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<GetQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
    let name = object_name(path)?;
    let Query(query) = query?;
    let answer = shared.info.read(|store| {
        let object: ObjectData = store.get(&name)?.clone().into();
        Some(match query.format {
            Format::Json => Json(object_json(&object)).into_response(),
            Format::Xml => {
                let xml = object_xml(&object, store.registry());
                ([(CONTENT_TYPE, XML_CONTENT_TYPE)], xml).into_response()
            }
        })
    });
    answer.ok_or_else(|| {
        let name = quote(&name);
        InfoError::NotFound { name }.into()
    })
}

/// `GET /info?match=&type=&combine=`: the selected objects, by name, as a JSON array
/// streamed [`LIST_CHUNK_OBJECTS`] objects at a time, each chunk read from the store when
/// the client is ready for it: a list of 240,000 objects is never whole in the server's
/// memory (as one JSON tree it cost 490 MiB). An object changed while the list is read
/// appears once, as it was when its chunk was read.
pub async fn list(
    State(shared): State<Arc<Shared>>,
    extensions: axum::http::Extensions,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
    // Only what the caller may read is listed.
    let access = super::caller::access(&extensions);
    let Query(query) = query?;
    let selection = SelectionData {
        name_regex: query.name_regex,
        types: query.types,
        any: matches!(query.combine, Combine::Or),
    };
    let selection = Arc::new(Selection::from_data(&selection)?);
    let (mut first, next) = shared.info.list_page(&selection, None, LIST_CHUNK_OBJECTS);
    first.retain(|object| access.may_read(&object.name));
    if next.is_none() {
        // One chunk: an ordinary answer, with its length.
        let objects: Vec<JsonValue> = first.iter().map(object_json).collect();
        return Ok(Json(JsonValue::Array(objects)).into_response());
    }
    struct Reading {
        shared: Arc<Shared>,
        access: crate::auth::Access,
        selection: Arc<Selection>,
        objects: Vec<ObjectData>,
        next: Option<String>,
        started: bool,
        ended: bool,
    }
    let reading = Reading {
        shared,
        access,
        selection,
        objects: first,
        next,
        started: false,
        ended: false,
    };
    let body = futures_util::stream::unfold(reading, |mut r| async move {
        if r.ended {
            return None;
        }
        let mut text = String::new();
        for object in r.objects.drain(..) {
            text.push(if r.started { ',' } else { '[' });
            r.started = true;
            text.push_str(&object_json(&object).to_string());
        }
        match r.next.take() {
            Some(after) => {
                let (mut objects, next) =
                    r.shared
                        .info
                        .list_page(&r.selection, Some(&after), LIST_CHUNK_OBJECTS);
                objects.retain(|object| r.access.may_read(&object.name));
                (r.objects, r.next) = (objects, next);
            }
            None => {
                text.push_str(if r.started { "]" } else { "[]" });
                r.ended = true;
            }
        }
        let chunk = Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(text));
        Some((chunk, r))
    });
    let body = axum::body::Body::from_stream(body);
    Ok(([(CONTENT_TYPE, "application/json")], body).into_response())
}

/// Objects rendered per chunk of a streamed `GET /info` answer.
pub const LIST_CHUNK_OBJECTS: usize = 1_000;

/// `DELETE /info/{name}`: the object as it was (its version advanced).
pub async fn delete(
    State(shared): State<Arc<Shared>>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<JsonValue>, HttpError> {
    let name = object_name(path)?;
    let request = InfoRequest::Delete {
        name,
        time: now_nanos(),
    };
    let reply = apply(&shared, request).await?;
    first_object(reply.objects)
}

/// `GET /info-types`: every declared type, by name.
pub async fn types(State(shared): State<Arc<Shared>>) -> Result<Json<JsonValue>, HttpError> {
    let reply = apply(&shared, InfoRequest::Types).await?;
    Ok(Json(JsonValue::Array(
        reply.types.iter().map(type_json).collect(),
    )))
}

/// Returns the one object a change answers with, as JSON.
pub(super) fn first_object(objects: Vec<Option<ObjectData>>) -> Result<Json<JsonValue>, HttpError> {
    match objects.into_iter().flatten().next() {
        Some(object) => Ok(Json(object_json(&object))),
        None => Err(HttpError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the information service answered a change without the object",
        )),
    }
}
