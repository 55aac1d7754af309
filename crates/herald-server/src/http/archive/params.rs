//! The query string of the archive routes, turned into archive queries: times in ISO 8601
//! or relative (`-1h`), a cursor `TIME_NS:SEQ`, a format (`json`, `ndjson`, `csv`, `acs-xml`).

use herald_archive::ArchiveError;
use herald_proto::archive::{BucketQuery, Cursor, LogQuery, SampleQuery};
use herald_proto::time::{now_nanos, parse_time_spec};
use herald_proto::PrioritySet;
use serde::Deserialize;

use crate::http::HttpError;

/// Records per JSON page unless `limit` says otherwise.
pub const DEFAULT_LIMIT: u32 = 1_000;
/// How far back `from` reaches when only `to` (or nothing) is given.
const DEFAULT_SPAN_NANOS: i64 = 3_600 * 1_000_000_000;

/// How an answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON document: a page and its `next` cursor.
    Json,
    /// One JSON object per line, streamed to the end of the range.
    Ndjson,
    /// Comma-separated values with a header line, streamed to the end of the range.
    Csv,
    /// ACS logging XML: a `<Log>` document of log entries, streamed to the end of the range.
    AcsXml,
}

/// Every parameter any archive route takes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveParams {
    /// Start (default: one hour before `to`).
    pub from: Option<String>,
    /// End (default: now).
    pub to: Option<String>,
    /// Records per page (JSON) or per internal read (streams).
    pub limit: Option<u32>,
    /// Continue after this cursor (`TIME_NS:SEQ`, the previous page's `next`).
    pub after: Option<String>,
    /// `json` (default), `ndjson` or `csv`.
    pub format: Option<String>,
    /// Fold the samples into this many buckets.
    pub buckets: Option<u32>,
    /// Only this numeric field in buckets.
    pub field: Option<String>,
    /// Priority set (`>=ERROR`), logs.
    pub priority: Option<String>,
    /// Subject glob, logs.
    pub subject: Option<String>,
    /// Origin host, logs.
    pub host: Option<String>,
    /// Origin process, logs.
    pub process: Option<String>,
    /// Text contains, logs.
    pub text: Option<String>,
    /// Comma-separated names, `/archive/at`.
    pub names: Option<String>,
    /// The instant, `/archive/at` (default: now).
    pub time: Option<String>,
}

fn bad(message: impl Into<String>) -> HttpError {
    HttpError::bad_request("bad_query", message)
}

impl From<ArchiveError> for HttpError {
    fn from(error: ArchiveError) -> Self {
        match error.kind {
            herald_archive::ArchiveErrorKind::BadQuery => bad(error.message),
            _ => HttpError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "archive",
                error.message,
            ),
        }
    }
}

fn time(param: &str, text: &str, now: i64) -> Result<i64, HttpError> {
    parse_time_spec(text, now).map_err(|err| bad(format!("`{param}`: {err}")))
}

/// The parameters `GET /archive/samples/{name}` takes.
pub const SAMPLES_PARAMS: &[&str] = &["from", "to", "limit", "after", "format", "buckets", "field"];
/// The parameters `GET /archive/logs` takes.
pub const LOGS_PARAMS: &[&str] = &[
    "from", "to", "limit", "after", "format", "priority", "subject", "host", "process", "text",
];
/// The parameters `GET /archive/at` takes.
pub const AT_PARAMS: &[&str] = &["names", "time", "format"];

impl ArchiveParams {
    /// The parameters given, by name.
    fn given(&self) -> impl Iterator<Item = &'static str> {
        [
            ("from", self.from.is_some()),
            ("to", self.to.is_some()),
            ("limit", self.limit.is_some()),
            ("after", self.after.is_some()),
            ("format", self.format.is_some()),
            ("buckets", self.buckets.is_some()),
            ("field", self.field.is_some()),
            ("priority", self.priority.is_some()),
            ("subject", self.subject.is_some()),
            ("host", self.host.is_some()),
            ("process", self.process.is_some()),
            ("text", self.text.is_some()),
            ("names", self.names.is_some()),
            ("time", self.time.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
    }

    /// Refuses a parameter another archive route takes but `route` does not (`buckets` on
    /// `/archive/logs`, `from` on `/archive/at`): left unread, it would be a filter the
    /// caller believes applied.
    ///
    /// # Errors
    /// `bad_query`, naming the parameter and what the route takes.
    pub fn only(&self, route: &str, takes: &[&str]) -> Result<(), HttpError> {
        match self.given().find(|name| !takes.contains(name)) {
            Some(name) => Err(bad(format!(
                "`{name}` does not apply to {route}, which takes {}",
                takes.join(", ")
            ))),
            None if self.field.is_some() && self.buckets.is_none() => {
                Err(bad("`field` applies to buckets: give `buckets` too"))
            }
            None => Ok(()),
        }
    }

    /// Returns the format asked for.
    ///
    /// # Errors
    /// An unknown format, named.
    pub fn format(&self) -> Result<Format, HttpError> {
        match self.format.as_deref().unwrap_or("json") {
            "json" => Ok(Format::Json),
            "ndjson" => Ok(Format::Ndjson),
            "csv" => Ok(Format::Csv),
            "acs-xml" => Ok(Format::AcsXml),
            other => Err(bad(format!(
                "unknown format `{other}` (expected json, ndjson, csv or acs-xml)"
            ))),
        }
    }

    /// Returns `[from, to)`.
    ///
    /// # Errors
    /// A time that does not parse, named with its parameter.
    pub fn range(&self) -> Result<(i64, i64), HttpError> {
        let now = now_nanos();
        let to = match &self.to {
            Some(text) => time("to", text, now)?,
            None => now,
        };
        let from = match &self.from {
            Some(text) => time("from", text, now)?,
            None => to.saturating_sub(DEFAULT_SPAN_NANOS),
        };
        Ok((from, to))
    }

    /// Returns the cursor in `after`.
    ///
    /// # Errors
    /// A cursor that is not `TIME_NS:SEQ`.
    pub fn after(&self) -> Result<Option<Cursor>, HttpError> {
        let Some(text) = &self.after else {
            return Ok(None);
        };
        let parsed = text.split_once(':').and_then(|(time, seq)| {
            Some(Cursor {
                time: time.parse().ok()?,
                seq: seq.parse().ok()?,
            })
        });
        parsed.map(Some).ok_or_else(|| {
            bad(format!(
                "bad cursor `{text}` (expected TIME_NS:SEQ from `next`)"
            ))
        })
    }

    /// Returns the samples query for `name`.
    ///
    /// # Errors
    /// As [`ArchiveParams::range`] and [`ArchiveParams::after`].
    pub fn samples(&self, name: &str) -> Result<SampleQuery, HttpError> {
        let (from, to) = self.range()?;
        Ok(SampleQuery {
            name: name.to_string(),
            from,
            to,
            after: self.after()?,
            limit: self.limit.unwrap_or(DEFAULT_LIMIT),
        })
    }

    /// Returns the bucket query for `name`, if `buckets` is given.
    ///
    /// # Errors
    /// As [`ArchiveParams::range`].
    pub fn buckets(&self, name: &str) -> Result<Option<BucketQuery>, HttpError> {
        let Some(buckets) = self.buckets else {
            return Ok(None);
        };
        let (from, to) = self.range()?;
        Ok(Some(BucketQuery {
            name: name.to_string(),
            from,
            to,
            buckets,
            field: self.field.clone(),
        }))
    }

    /// Returns the logs query.
    ///
    /// # Errors
    /// As [`ArchiveParams::range`], or a bad priority set.
    pub fn logs(&self) -> Result<LogQuery, HttpError> {
        let (from, to) = self.range()?;
        let priorities = match &self.priority {
            None => PrioritySet::ALL,
            Some(text) => text
                .parse()
                .map_err(|err: herald_proto::PriorityError| bad(format!("`priority`: {err}")))?,
        };
        Ok(LogQuery {
            from,
            to,
            priorities,
            subject: self.subject.clone(),
            host: self.host.clone(),
            process: self.process.clone(),
            text: self.text.clone(),
            after: self.after()?,
            limit: self.limit.unwrap_or(DEFAULT_LIMIT),
        })
    }
}

/// Encodes a cursor for `after`.
pub fn cursor_text(cursor: Cursor) -> String {
    format!("{}:{}", cursor.time, cursor.seq)
}
