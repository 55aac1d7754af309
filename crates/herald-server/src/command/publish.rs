//! `PUBLISH`: route a batch of records, offer it to the archive, then acknowledge it if
//! asked — at once for `received`, once the archive has it durably for `stored`.

use std::sync::atomic::Ordering;

use herald_proto::frame::{Ack, Publish};
use herald_proto::request::CheckedPublish;
use herald_proto::time::now_nanos;
use herald_proto::{AckLevel, ErrorCode, ErrorFrame, Frame};
use herald_router::Origin;

use crate::events;
use crate::producers::Fate;
use crate::session_state::{Close, Session};

pub(super) async fn apply(session: &mut Session, checked: CheckedPublish) -> Result<(), Close> {
    let refused = checked.first_refused.is_some().then(|| refusal(&checked));
    let mut publish = checked.publish;
    if let Some(refusal) = refused {
        // The good records of the batch are routed; the producer hears of the rest first.
        let shared = &session.shared;
        events::records_refused(
            &shared.monitor,
            session.state.id,
            u64::from(checked.refused),
            &refusal,
        );
        if publish.ack != AckLevel::None {
            let error = ErrorFrame {
                cid: publish.ack_id,
                code: ErrorCode::BadRecord,
                message: refusal,
            };
            session.reply(Frame::Error(error)).await;
        }
    }
    if !session.access.publishes_anything() {
        deny_records(session, &mut publish).await;
    }
    if !session.shared.mirrored.is_empty() && session.feed.is_none() {
        refuse_mirrored(session, &mut publish).await;
    }
    let shared = &session.shared;
    if publish.ack == AckLevel::Stored {
        if let Some(message) = refuse_stored(session, &publish) {
            let error = ErrorFrame {
                cid: publish.ack_id,
                code: ErrorCode::Archive,
                message,
            };
            session.reply(Frame::Error(error)).await;
            return Ok(());
        }
    }
    // Records taken here before (resent across a reconnection) are acknowledged again and
    // nothing else; those delivered here before (over a route, from the member the producer
    // used before a failover) are passed on to routes and the archive only.
    let taken = publish.records.len() as u64;
    let numbered = session.producer != 0 && publish.seqs.len() == publish.records.len();
    let mut seen = Vec::new();
    if numbered {
        let fates = &mut session.fates;
        shared
            .producers
            .taken(session.producer, &publish.seqs, fates);
        if fates.contains(&Fate::Taken) {
            let keep: Vec<bool> = fates.iter().map(|f| *f != Fate::Taken).collect();
            retain(&mut publish, &keep);
            fates.retain(|f| *f != Fate::Taken);
        }
        if fates.contains(&Fate::Seen) {
            seen = fates.iter().map(|f| *f == Fate::Seen).collect();
        }
    }
    let received = now_nanos();
    // Log storms collapse and sources over their quota are refused here, after the
    // producer's numbers were noted (a resend of a record held back is a duplicate).
    // A producer waiting for `stored` is told its records are stored: none is held back.
    let collapse = publish.ack != AckLevel::Stored;
    let storm = shared
        .storms
        .filter(&publish.records, session.state.id, received, collapse);
    if let Some(keep) = &storm.keep {
        if !seen.is_empty() {
            let mut index = 0;
            seen.retain(|_| {
                index += 1;
                keep[index - 1]
            });
        }
        retain(&mut publish, keep);
    }
    if let Some(reason) = &storm.refusal {
        let message = format!(
            "{} of {taken} records refused: {reason}; {}",
            storm.refused,
            others(taken.saturating_sub(storm.refused) as usize)
        );
        tracing::debug!(connection = session.state.id, "{message}");
        if publish.ack != AckLevel::None {
            let error = ErrorFrame {
                cid: publish.ack_id,
                code: ErrorCode::Limit,
                message,
            };
            session.reply(Frame::Error(error)).await;
        }
    }
    let origin = numbered.then(|| Origin {
        producer: session.producer,
        seqs: &publish.seqs,
        seen: &seen,
    });
    let mut stats =
        shared
            .router
            .route_from(&mut session.route, &publish.records, received, origin);
    // Batches that went to other members are acknowledged once those have them.
    let marks = session.route.take_marks();
    let bytes: usize = publish.records.iter().map(|r| r.bytes.len()).sum();
    // The archive takes the batch's records whole (the router keeps its own references).
    let offer = shared.archive.as_ref().map(|archive| {
        let stored = publish.ack == AckLevel::Stored;
        let records = std::mem::take(&mut publish.records);
        archive.offer(records, stats.first_seq, received, stored)
    });
    if let Some(dropped) = offer.map(|o| o.dropped).filter(|d| *d > 0) {
        events::archive_dropped(dropped);
    }
    // Subscribers with policy `block` and a full queue make this publisher wait, each at
    // most its block timeout, counted from the same start so the waits overlap.
    let started = tokio::time::Instant::now();
    for (queue, blocked) in session.route.take_blocked() {
        stats
            .dropped
            .merge(&queue.push_blocking(blocked, started).await);
    }
    let queued = stats.deliveries.saturating_sub(stats.dropped.total());
    shared
        .monitor
        .count_batch(stats.records, bytes as u64, queued);
    session
        .state
        .records_in
        .fetch_add(stats.records, Ordering::Relaxed);
    if stats.dropped.total() > 0 {
        events::records_dropped(&shared.monitor, session.state.id, &stats.dropped);
    }
    if !storm.marked.is_empty() {
        let mut route = herald_router::RouteContext::default();
        crate::ingest::route_batch(shared, &mut route, &storm.marked).await;
    }
    let ack = Ack {
        ack_id: publish.ack_id,
        level: publish.ack,
        count: taken - storm.refused,
    };
    match (publish.ack, offer, &shared.archive) {
        (AckLevel::None, ..) => {}
        (AckLevel::Received, ..) => {
            let (replies, none) = (session.replies.clone(), None::<std::future::Ready<()>>);
            session
                .acks
                .send(Frame::Ack(ack), none, marks, &replies)
                .await;
        }
        (AckLevel::Stored, Some(offer), Some(archive)) => {
            // Answered when durable, without holding up this connection's next frames.
            let (archive, replies) = (archive.clone(), session.replies.clone());
            let durable = async move { crate::archive::durable(&archive, offer.ticket).await };
            session
                .acks
                .send(Frame::Ack(ack), Some(durable), marks, &replies)
                .await;
        }
        (AckLevel::Stored, ..) => unreachable!("refused above without an archive"),
    }
    Ok(())
}

/// Takes the records the connection's identity may not publish out of the batch; the
/// producer hears of them (as of bad records) before the `ACK` that counts the others.
async fn deny_records(session: &Session, publish: &mut Publish) {
    let mut first = None;
    let mut denied = 0u64;
    // A batch mostly repeats a few subjects: a record about the subject just allowed needs
    // no second look at the globs.
    let mut allowed = String::new();
    let keep: Vec<bool> = publish
        .records
        .iter()
        .map(|record| {
            let subject = record.subject();
            if !allowed.is_empty() && subject == allowed {
                return true;
            }
            match session.access.check_publish(subject) {
                Ok(()) => {
                    allowed.clear();
                    allowed.push_str(subject);
                    true
                }
                Err(message) => {
                    denied += 1;
                    first.get_or_insert(message);
                    false
                }
            }
        })
        .collect();
    retain(publish, &keep);
    let Some(first) = first else {
        return;
    };
    let others = others(publish.records.len());
    let message = match denied {
        1 => format!("{first}; {others}"),
        n => format!("{first}; {n} records refused, {others}"),
    };
    let shared = &session.shared;
    events::denied(&shared.monitor, session.state.id, &message);
    events::records_refused(&shared.monitor, session.state.id, denied, &message);
    if publish.ack != AckLevel::None {
        let error = ErrorFrame {
            cid: publish.ack_id,
            code: ErrorCode::Denied,
            message,
        };
        session.reply(Frame::Error(error)).await;
    }
}

/// Takes the records about subjects this server mirrors read-only out of the batch; the
/// producer hears of them (as of bad records) before the `ACK` that counts the others.
async fn refuse_mirrored(session: &Session, publish: &mut Publish) {
    let mirrored = &session.shared.mirrored;
    let mut first = None;
    let mut refused = 0u64;
    let keep: Vec<bool> = publish
        .records
        .iter()
        .map(|record| match mirrored.subject_refusal(record.subject()) {
            None => true,
            Some(message) => {
                refused += 1;
                first.get_or_insert(message);
                false
            }
        })
        .collect();
    let Some(first) = first else {
        return;
    };
    retain(publish, &keep);
    let others = others(publish.records.len());
    let message = match refused {
        1 => format!("{first}; {others}"),
        n => format!("{first}; {n} records refused, {others}"),
    };
    let shared = &session.shared;
    events::records_refused(&shared.monitor, session.state.id, refused, &message);
    if publish.ack != AckLevel::None {
        let error = ErrorFrame {
            cid: publish.ack_id,
            code: ErrorCode::ReadOnly,
            message,
        };
        session.reply(Frame::Error(error)).await;
    }
}

/// Keeps the records of `publish` (and their numbers) whose `keep` is true.
fn retain(publish: &mut Publish, keep: &[bool]) {
    let mut index = 0;
    publish.records.retain(|_| {
        index += 1;
        keep[index - 1]
    });
    if !publish.seqs.is_empty() {
        let mut index = 0;
        publish.seqs.retain(|_| {
            index += 1;
            keep[index - 1]
        });
    }
}

/// Says which records of a batch were refused, why, and what became of the others.
fn refusal(checked: &CheckedPublish) -> String {
    let others = others(checked.publish.records.len());
    let text = checked.refusal().unwrap_or_default();
    format!("{text}; {others}")
}

/// What became of the records of a batch that were not refused.
fn others(routed: usize) -> String {
    match routed {
        0 => "nothing was routed".to_string(),
        1 => "the other record was taken".to_string(),
        n => format!("the other {n} records were taken"),
    }
}

/// Says why a `stored` acknowledgement cannot be promised for this batch, if it cannot:
/// there is no archive, or a record matches no archive rule. Nothing is routed then.
fn refuse_stored(session: &Session, publish: &Publish) -> Option<String> {
    let Some(archive) = &session.shared.archive else {
        return Some(
            "acknowledgement level `stored` needs an archive, and this server has none \
             (archive.backend = \"none\"); nothing was routed"
                .to_string(),
        );
    };
    let subject = archive.unarchived(&publish.records)?;
    Some(format!(
        "acknowledgement level `stored` for a record about `{subject}`, which no archive \
         rule keeps; add a rule for it ([[archive.rules]]) or send it as `received`; \
         nothing was routed"
    ))
}
