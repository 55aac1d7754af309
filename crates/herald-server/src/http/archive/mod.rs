//! The archive over HTTP:
//!
//! | route | answer |
//! |---|---|
//! | `GET /archive/samples/{name}?from=&to=` | the samples of one name; `buckets=N` (and `field=`) folds them for a chart |
//! | `GET /archive/logs?from=&to=&priority=&subject=&host=&process=&text=` | log records passing the filters |
//! | `GET /archive/at?names=A,B&time=` | the value of each name at an instant |
//!
//! `format=json` (default) answers one page, `{"records": […], "next": "TIME_NS:SEQ" | null}`
//! — pass `next` back as `after` for the following page. `format=ndjson` and `format=csv`
//! stream the whole range, reading it page by page, so a year-long answer holds one page in
//! memory at a time. Buckets and values at an instant larger than a part are streamed part
//! by part (`parts.rs`). Times are ISO 8601 (UTC when no zone is given) or relative (`-1h`).

/// Public so that herald-testkit's `http_params` fuzz target runs exactly this parsing.
pub mod params;
mod parts;
mod render;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use herald_archive::query::Answer;
use herald_archive::Archive;
use herald_proto::archive::{ArchiveReply, ArchiveRequest, AtQuery, Page, MAX_AT_NAMES};
use serde_json::json;

use params::{cursor_text, ArchiveParams, Format, AT_PARAMS, LOGS_PARAMS, SAMPLES_PARAMS};
use render::Columns;

use crate::http::HttpError;
use crate::shared::Shared;

/// Response header counting the stored records an answer skipped because they do not
/// decode (also `skipped` in JSON objects).
const SKIPPED_HEADER: &str = "herald-skipped";

/// Bytes of records read per page of a stream.
const STREAM_PAGE_BYTES: usize = 4 << 20;

fn archive_of(shared: &Shared) -> Result<Arc<Archive>, HttpError> {
    shared.archive.clone().ok_or_else(|| {
        HttpError::new(
            StatusCode::NOT_FOUND,
            "no_archive",
            "this server has no archive (archive.backend = \"none\")",
        )
    })
}

/// Answers from this server's archive, or, on a member of a cluster with embedded
/// archives, from every member's, merged by time ([`crate::cluster::query`]).
async fn ask(
    shared: &Arc<Shared>,
    archive: &Arc<Archive>,
    request: ArchiveRequest,
    bytes: usize,
) -> Result<Answer, HttpError> {
    if let (true, Some(cluster)) = (
        crate::cluster::query::merged(shared, &request),
        shared.cluster.get(),
    ) {
        return Ok(crate::cluster::query::ask_all(shared.local(), cluster, request, bytes).await?);
    }
    Ok(crate::archive::query(archive, request, bytes).await?)
}

/// The page of an answer, and how many stored records it skipped.
fn page_of(answer: Answer) -> (Page, u64) {
    match answer.reply {
        ArchiveReply::Page(page) => (page, answer.skipped),
        _ => (Page::default(), answer.skipped),
    }
}

/// Says in a header how many stored records an answer left out because they do not decode.
fn with_skipped(mut response: Response, skipped: u64) -> Response {
    if skipped > 0 {
        response
            .headers_mut()
            .insert(SKIPPED_HEADER, header::HeaderValue::from(skipped));
    }
    response
}

fn with_type(body: impl Into<Body>, content_type: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
}

/// `GET /archive/samples/{name}`.
pub async fn samples(
    State(shared): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    params: Result<Query<ArchiveParams>, QueryRejection>,
) -> Result<Response, HttpError> {
    let (Path(name), Query(params)) = (name?, params?);
    params.only("/archive/samples/{name}", SAMPLES_PARAMS)?;
    let archive = archive_of(&shared)?;
    let format = params.format()?;
    if let Some(query) = params.buckets(&name)? {
        let shape = parts::Shape::Buckets { name };
        let request = ArchiveRequest::Buckets(query);
        return parts::answer(&archive, request, shape, format).await;
    }
    let request = ArchiveRequest::Samples(params.samples(&name)?);
    answer_records(&shared, archive, request, format, Columns::Samples).await
}

/// `GET /archive/logs`.
pub async fn logs(
    State(shared): State<Arc<Shared>>,
    params: Result<Query<ArchiveParams>, QueryRejection>,
) -> Result<Response, HttpError> {
    let Query(params) = params?;
    params.only("/archive/logs", LOGS_PARAMS)?;
    let archive = archive_of(&shared)?;
    let request = ArchiveRequest::Logs(params.logs()?);
    answer_records(&shared, archive, request, params.format()?, Columns::Logs).await
}

/// `GET /archive/at`.
pub async fn at(
    State(shared): State<Arc<Shared>>,
    params: Result<Query<ArchiveParams>, QueryRejection>,
) -> Result<Response, HttpError> {
    let Query(params) = params?;
    params.only("/archive/at", AT_PARAMS)?;
    let archive = archive_of(&shared)?;
    let names: Vec<String> = params
        .names
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect();
    if names.is_empty() || names.len() > MAX_AT_NAMES {
        return Err(HttpError::bad_request(
            "bad_query",
            format!("give 1 to {MAX_AT_NAMES} comma-separated `names`"),
        ));
    }
    let now = herald_proto::time::now_nanos();
    let time = match &params.time {
        Some(text) => herald_proto::time::parse_time_spec(text, now)
            .map_err(|err| HttpError::bad_request("bad_query", format!("`time`: {err}")))?,
        None => now,
    };
    let request = ArchiveRequest::At(AtQuery {
        names: names.clone(),
        time,
    });
    let shape = parts::Shape::At { names, done: 0 };
    parts::answer(&archive, request, shape, params.format()?).await
}

async fn answer_records(
    shared: &Arc<Shared>,
    archive: Arc<Archive>,
    request: ArchiveRequest,
    format: Format,
    columns: Columns,
) -> Result<Response, HttpError> {
    if format == Format::Json {
        let max_bytes = shared.config().max_frame_bytes as usize;
        let (page, skipped) = page_of(ask(shared, &archive, request, max_bytes).await?);
        let records = page
            .records
            .iter()
            .map(render::stored_json)
            .collect::<Result<Vec<_>, _>>()?;
        let next = page.next.map(cursor_text);
        let body = json!({ "records": records, "next": next, "skipped": skipped });
        return Ok(with_skipped(Json(body).into_response(), skipped));
    }
    // Check the query before the status line goes out: a stream cannot turn into a 400.
    let first = page_of(ask(shared, &archive, request.clone(), STREAM_PAGE_BYTES).await?);
    let content_type = match format {
        Format::Csv => "text/csv",
        Format::AcsXml => "application/xml; charset=utf-8",
        _ => "application/x-ndjson",
    };
    let state = Stream {
        shared: Arc::clone(shared),
        archive,
        request,
        format,
        columns,
        pending: Some(first),
        header: matches!(format, Format::Csv | Format::AcsXml),
        skipped: 0,
    };
    let body = futures_util::stream::unfold(Some(state), |state| async move {
        let mut state = state?;
        let (chunk, more) = state.next_chunk().await;
        Some((
            Ok::<Bytes, std::convert::Infallible>(Bytes::from(chunk)),
            more.then_some(state),
        ))
    });
    Ok(with_type(Body::from_stream(body), content_type))
}

/// The start of an ACS logging XML answer; `</Log>` ends it.
const ACS_XML_HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Log>\n";

/// A streamed answer: one page at a time.
struct Stream {
    shared: Arc<Shared>,
    archive: Arc<Archive>,
    request: ArchiveRequest,
    format: Format,
    columns: Columns,
    pending: Option<(Page, u64)>,
    header: bool,
    /// Stored records skipped so far because they do not decode; said in a last line.
    skipped: u64,
}

impl Stream {
    /// Renders the next page; says whether more follow. An error ends the stream with a
    /// line saying what failed.
    async fn next_chunk(&mut self) -> (String, bool) {
        let (page, skipped) = match self.pending.take() {
            Some(first) => first,
            None => match ask(
                &self.shared,
                &self.archive,
                self.request.clone(),
                STREAM_PAGE_BYTES,
            )
            .await
            {
                Ok(answer) => page_of(answer),
                Err(err) => return (self.error_line(&err.message), false),
            },
        };
        self.skipped += skipped;
        let mut out = String::new();
        if std::mem::take(&mut self.header) {
            out.push_str(match self.format {
                Format::AcsXml => ACS_XML_HEAD,
                _ => herald_info::csv::header(self.columns),
            });
        }
        for stored in &page.records {
            let written = match self.format {
                Format::Csv => render::csv_lines(&mut out, self.columns, stored),
                Format::AcsXml => render::decode(stored).map(|record| {
                    herald_info::acs_xml::write_entry(&record, &mut out);
                    out.push('\n');
                }),
                _ => render::stored_json(stored).map(|j| out.push_str(&format!("{j}\n"))),
            };
            if let Err(err) = written {
                out.push_str(&self.error_line(&err.message));
                return (out, false);
            }
        }
        let more = self.request.resume_after(page.next);
        if !more && self.skipped > 0 {
            out.push_str(&self.skipped_line());
        }
        if !more && self.format == Format::AcsXml {
            out.push_str("</Log>\n");
        }
        (out, more)
    }

    /// The last line of a stream that skipped stored records that do not decode.
    fn skipped_line(&self) -> String {
        let skipped = self.skipped;
        match self.format {
            Format::Csv => format!("# skipped: {skipped} stored records that do not decode\n"),
            Format::AcsXml => {
                format!("<!-- skipped: {skipped} stored records that do not decode -->\n")
            }
            _ => format!("{}\n", json!({ "skipped": skipped })),
        }
    }

    fn error_line(&self, message: &str) -> String {
        match self.format {
            Format::Csv => format!("# error: {message}\n"),
            Format::AcsXml => format!("<!-- error: {} -->\n</Log>\n", message.replace("--", "- -")),
            _ => format!("{}\n", json!({ "error": message })),
        }
    }
}
