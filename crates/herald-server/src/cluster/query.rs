//! Archive queries across a cluster whose members keep embedded archives: each member
//! archives the records it received from its producers, so a query on any member asks the
//! others (`QUERY` over the route, answered with their own archive only: one hop) and
//! merges the answers by time. With the archive on Cassandra every member reads the same
//! store, and nothing is asked of the others.
//!
//! Merged: pages of records (`logs`, `samples`) and the values at an instant (`at`: the
//! latest of all members). Decimated queries (`buckets`) and streamed exports answer from
//! the member's own archive.

use std::sync::Arc;
use std::time::Duration;

use herald_archive::query::Answer;
use herald_proto::archive::{ArchiveReply, ArchiveRequest, Cursor, Page, StoredRecord};
use herald_proto::msgpack::Reader;
use herald_proto::record::RecordMeta;
use herald_proto::{ErrorCode, Frame};

use super::requests::Requests;
use super::{Cluster, Link};
use crate::info::InfoFailure;
use crate::local::Local;

/// How long a member waits for another's answer.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(10);

/// Queries this member asked of others, waiting for their answers (cids far from those of
/// forwarded information requests, which count up from 1).
#[derive(Debug)]
pub struct Asked(Requests<Answer>);

impl Default for Asked {
    fn default() -> Self {
        Asked(Requests::new(1 << 62))
    }
}

impl Asked {
    /// Another member answered query `cid`; returns false if no query of this member
    /// waits under that cid (the answer is someone else's).
    pub fn answered(&self, cid: u64, answer: Result<Answer, InfoFailure>) -> bool {
        self.0.answered(cid, answer)
    }

    async fn ask(&self, link: &Link, request: ArchiveRequest) -> Result<Answer, InfoFailure> {
        let frame = |cid| Frame::Query { cid, request };
        self.0.ask(link, frame, ASK_TIMEOUT, "the query").await
    }
}

/// Returns true if, on a member of a cluster, `request` is answered from every member's
/// archive: the members keep archives of their own, and the query is merged (pages and
/// instants).
pub fn merged(shared: &Local, request: &ArchiveRequest) -> bool {
    let embedded = !matches!(
        shared.config().archive.backend,
        crate::config::ArchiveBackendConfig::Cassandra { .. }
    );
    embedded
        && matches!(
            request,
            ArchiveRequest::Logs(_) | ArchiveRequest::Samples(_) | ArchiveRequest::At(_)
        )
}

/// Answers `request` from this member's archive and those of every member reachable now,
/// merged by time, within `max_bytes` of records. A member that cannot answer in time is
/// left out (and logged).
///
/// # Errors
/// This member's archive's error.
pub async fn ask_all(
    shared: &Arc<Local>,
    cluster: &Arc<Cluster>,
    request: ArchiveRequest,
    max_bytes: usize,
) -> Result<Answer, herald_archive::ArchiveError> {
    let archive = shared
        .archive
        .as_ref()
        .expect("merged queries are asked with an archive");
    let links: Vec<Arc<Link>> = cluster.links().into_iter().filter(|l| l.is_up()).collect();
    let asking: Vec<_> = links
        .iter()
        .map(|link| {
            let (cluster, link, request) = (Arc::clone(cluster), Arc::clone(link), request.clone());
            tokio::spawn(async move { cluster.asked.ask(&link, request).await })
        })
        .collect();
    let mut answers = vec![crate::archive::query(archive, request.clone(), max_bytes).await?];
    for (link, asked) in links.iter().zip(asking) {
        match asked.await {
            Ok(Ok(answer)) => answers.push(answer),
            Ok(Err((_, message))) => {
                tracing::warn!(member = %link.member().name, %message, "a member's archive is left out of a query");
            }
            Err(_) => {}
        }
    }
    let limit = match &request {
        ArchiveRequest::Logs(q) => q.limit,
        ArchiveRequest::Samples(q) => q.limit,
        _ => u32::MAX,
    } as usize;
    Ok(merge(answers, limit, max_bytes))
}

/// Answers a far member's query from this member's archive only.
pub fn answer_far(shared: &Arc<Local>, link: &Arc<Link>, cid: u64, request: ArchiveRequest) {
    let Some(archive) = shared.archive.clone() else {
        link.send(Frame::Error(herald_proto::ErrorFrame {
            cid,
            code: ErrorCode::Archive,
            message: "this member has no archive".into(),
        }));
        return;
    };
    let max_bytes = shared.config().max_frame_bytes as usize / 2;
    let link = Arc::clone(link);
    tokio::spawn(async move {
        let frame = match crate::archive::query(&archive, request, max_bytes).await {
            Ok(answer) => Frame::QueryReply {
                cid,
                reply: answer.reply,
                skipped: answer.skipped,
                more: false,
            },
            Err(err) => Frame::Error(herald_proto::ErrorFrame {
                cid,
                code: ErrorCode::Archive,
                message: err.message,
            }),
        };
        link.send(frame);
    });
}

/// Merges the members' answers: pages by (time, sequence number), cut at the earliest point
/// where a member's page stopped short (what follows it there comes with the next page), at
/// `limit` records and at `max_bytes`; instants by the latest record per name.
pub fn merge(answers: Vec<Answer>, limit: usize, max_bytes: usize) -> Answer {
    let skipped = answers.iter().map(|a| a.skipped).sum();
    let mut answers = answers.into_iter();
    let Some(first) = answers.next() else {
        return Answer {
            reply: ArchiveReply::Page(Page::default()),
            skipped,
        };
    };
    let reply = match first.reply {
        ArchiveReply::Page(page) => {
            let mut pages = vec![page];
            pages.extend(answers.filter_map(|a| match a.reply {
                ArchiveReply::Page(page) => Some(page),
                _ => None,
            }));
            ArchiveReply::Page(merge_pages(pages, limit, max_bytes))
        }
        ArchiveReply::At(mut latest) => {
            for answer in answers {
                if let ArchiveReply::At(values) = answer.reply {
                    for (held, other) in latest.iter_mut().zip(values) {
                        if other.as_ref().map(time_of) > held.as_ref().map(time_of) {
                            *held = other;
                        }
                    }
                }
            }
            ArchiveReply::At(latest)
        }
        other => other,
    };
    Answer { reply, skipped }
}

fn merge_pages(pages: Vec<Page>, limit: usize, max_bytes: usize) -> Page {
    // Past the earliest cursor of a page cut short, that member's records are not known yet.
    let horizon = pages.iter().filter_map(|p| p.next).min();
    let mut records: Vec<(i64, u64, StoredRecord)> = pages
        .into_iter()
        .flat_map(|p| p.records)
        .map(|r| (time_of(&r), r.seq, r))
        .filter(|(time, seq, _)| horizon.is_none_or(|h| (*time, *seq) <= (h.time, h.seq)))
        .collect();
    records.sort_by_key(|(time, seq, _)| (*time, *seq));
    let (mut kept, mut bytes) = (Vec::new(), 0);
    let mut cut = false;
    for (time, seq, record) in records {
        if kept.len() >= limit || (!kept.is_empty() && bytes + record.record.len() > max_bytes) {
            cut = true;
            break;
        }
        bytes += record.record.len();
        kept.push((time, seq, record));
    }
    let next = match (cut, kept.last()) {
        (true, Some((time, seq, _))) => Some(Cursor {
            time: *time,
            seq: *seq,
        }),
        _ => horizon,
    };
    Page {
        records: kept.into_iter().map(|(_, _, r)| r).collect(),
        next,
    }
}

/// The producer's time of a stored record (0 if it does not decode).
fn time_of(record: &StoredRecord) -> i64 {
    RecordMeta::scan(&mut Reader::new(&record.record), 0).map_or(0, |meta| meta.time)
}
