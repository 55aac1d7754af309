//! Buckets and values at an instant over HTTP. The archive reads them in parts of at most
//! [`STREAM_PAGE_BYTES`](super::STREAM_PAGE_BYTES); an answer of one part is sent whole
//! (with the `herald-skipped` header), a larger one is streamed part by part, so neither
//! the server nor a slow reader holds it whole. Every format reads the same either way,
//! except that a streamed answer cannot carry the header: NDJSON and CSV then say what was
//! skipped in a last line, JSON buckets in `skipped`.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures_util::StreamExt;
use herald_archive::query::Answer;
use herald_archive::Archive;
use herald_proto::archive::{ArchiveReply, ArchiveRequest};
use serde_json::json;

use super::params::Format;
use super::render::{self, Columns};
use super::{with_skipped, with_type, STREAM_PAGE_BYTES};
use crate::archive::Parts;
use crate::http::HttpError;

/// What an answer holds, and where a streamed one has got to.
pub enum Shape {
    /// The buckets of one name.
    Buckets {
        /// The name, repeated in the JSON answer.
        name: String,
    },
    /// The value of each of `names` at an instant.
    At {
        /// The names asked, in order: part `n`'s values belong to the names after `done`.
        names: Vec<String>,
        /// Names answered by the parts written so far.
        done: usize,
    },
}

/// Answers `request` (buckets or values at an instant) in `format`.
///
/// # Errors
/// The query's error before anything is sent (`bad_query` 400, `archive` 503).
pub async fn answer(
    archive: &Arc<Archive>,
    request: ArchiveRequest,
    shape: Shape,
    format: Format,
) -> Result<Response, HttpError> {
    if format == Format::AcsXml {
        return Err(HttpError::bad_request(
            "bad_query",
            "format=acs-xml writes log entries: it is for records, not buckets or values at an instant",
        ));
    }
    let mut parts = crate::archive::query_parts(archive, request, STREAM_PAGE_BYTES);
    // Both the first part and whether a second follows are known before the status line:
    // a bad query is a 400, and an answer of one part gets its header.
    let first = next_part(&mut parts).await?;
    let second = match parts.next().await {
        Some(part) => Some(part.map_err(HttpError::from)?),
        None => None,
    };
    let mut writer = Writer {
        shape,
        format,
        items: 0,
        skipped: 0,
    };
    let content_type = writer.content_type();
    let skipped = first.skipped;
    let mut head = writer.head();
    writer.part(&mut head, first)?;
    let Some(second) = second else {
        head.push_str(&writer.tail());
        return Ok(with_skipped(with_type(head, content_type), skipped));
    };
    let state = Streamed {
        writer,
        parts,
        pending: Some(second),
        ended: false,
    };
    let rest = futures_util::stream::unfold(state, |mut state| async move {
        let chunk = state.next_chunk().await?;
        Some((
            Ok::<Bytes, std::convert::Infallible>(Bytes::from(chunk)),
            state,
        ))
    });
    let head = futures_util::stream::once(async move {
        Ok::<Bytes, std::convert::Infallible>(Bytes::from(head))
    });
    Ok(with_type(Body::from_stream(head.chain(rest)), content_type))
}

async fn next_part(parts: &mut Parts) -> Result<Answer, HttpError> {
    match parts.next().await {
        Some(part) => Ok(part?),
        None => Err(HttpError::from(herald_archive::ArchiveError::io(
            "query task",
            "ended without an answer",
        ))),
    }
}

/// A streamed answer: the parts after the first, then the tail.
struct Streamed {
    writer: Writer,
    parts: Parts,
    pending: Option<Answer>,
    ended: bool,
}

impl Streamed {
    /// The text of the next part, or the tail after the last; `None` once the tail is out.
    async fn next_chunk(&mut self) -> Option<String> {
        if self.ended {
            return None;
        }
        let part = match self.pending.take() {
            Some(part) => Some(Ok(part)),
            None => self.parts.next().await,
        };
        let mut out = String::new();
        let failed = match part {
            Some(Ok(part)) => self.writer.part(&mut out, part).err(),
            Some(Err(err)) => Some(HttpError::from(err)),
            None => {
                self.ended = true;
                return Some(self.writer.tail());
            }
        };
        if let Some(err) = failed {
            // The status line is out: the answer ends with a line saying what failed.
            self.ended = true;
            out.push_str(&self.writer.error_line(&err.message));
        }
        Some(out)
    }
}

/// Writes the parts of one answer in one format.
struct Writer {
    shape: Shape,
    format: Format,
    /// Items written so far (JSON needs commas between them).
    items: usize,
    skipped: u64,
}

impl Writer {
    fn content_type(&self) -> &'static str {
        match self.format {
            Format::Json => "application/json",
            Format::Ndjson | Format::AcsXml => "application/x-ndjson",
            Format::Csv => "text/csv",
        }
    }

    fn head(&self) -> String {
        match (&self.shape, self.format) {
            (Shape::Buckets { name }, Format::Json) => {
                format!("{{\"name\":{},\"buckets\":[", json!(name))
            }
            (Shape::At { .. }, Format::Json) => "[".to_string(),
            (Shape::Buckets { .. }, Format::Csv) => herald_info::csv::BUCKETS_HEADER.to_string(),
            (Shape::At { .. }, Format::Csv) => herald_info::csv::header(Columns::Samples).into(),
            (_, Format::Ndjson | Format::AcsXml) => String::new(),
        }
    }

    /// Appends one part's items.
    fn part(&mut self, out: &mut String, part: Answer) -> Result<(), HttpError> {
        self.skipped += part.skipped;
        match (&mut self.shape, part.reply) {
            (Shape::Buckets { .. }, ArchiveReply::Buckets(buckets)) => {
                for bucket in &buckets {
                    match self.format {
                        Format::Csv => herald_info::csv::bucket_lines(out, bucket),
                        _ => {
                            let item = herald_info::json::bucket_json(bucket);
                            push_item(out, self.format, &mut self.items, &item);
                        }
                    }
                }
            }
            (Shape::At { names, done }, ArchiveReply::At(found)) => {
                let names = names.get(*done..).unwrap_or_default();
                *done += found.len();
                for (name, stored) in names.iter().zip(&found) {
                    match (self.format, stored) {
                        // The samples' columns; a name with nothing archived has no line.
                        (Format::Csv, Some(stored)) => {
                            render::csv_lines(out, Columns::Samples, stored)?;
                        }
                        (Format::Csv, None) => {}
                        (_, stored) => {
                            let record = match stored {
                                Some(stored) => render::stored_json(stored)?,
                                None => serde_json::Value::Null,
                            };
                            let item = json!({ "name": name, "record": record });
                            push_item(out, self.format, &mut self.items, &item);
                        }
                    }
                }
            }
            _ => {
                return Err(HttpError::from(herald_archive::ArchiveError::io(
                    "query",
                    "the archive answered with another kind of answer",
                )))
            }
        }
        Ok(())
    }

    fn tail(&self) -> String {
        let skipped = self.skipped;
        match (&self.shape, self.format) {
            (Shape::Buckets { .. }, Format::Json) => format!("],\"skipped\":{skipped}}}"),
            (Shape::At { .. }, Format::Json) => "]".to_string(),
            (_, _) if skipped == 0 => String::new(),
            (_, Format::Csv) => format!("# skipped: {skipped} stored records that do not decode\n"),
            (_, _) => format!("{}\n", json!({ "skipped": skipped })),
        }
    }

    fn error_line(&self, message: &str) -> String {
        match self.format {
            Format::Csv => format!("# error: {message}\n"),
            _ => format!("\n{}\n", json!({ "error": message })),
        }
    }
}

/// Appends one JSON item: comma-separated in JSON, one per line in NDJSON.
fn push_item(out: &mut String, format: Format, items: &mut usize, item: &serde_json::Value) {
    if format == Format::Ndjson {
        out.push_str(&format!("{item}\n"));
    } else {
        if *items > 0 {
            out.push(',');
        }
        out.push_str(&item.to_string());
    }
    *items += 1;
}
