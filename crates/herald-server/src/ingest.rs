//! Records that a front door other than the native protocol made (syslog, OpenTelemetry),
//! routed and archived as if published here: one batch at a time, through the storm rule
//! and the source quotas, with the monitor's counts and every drop counted.

use herald_proto::frame::RawRecord;
use herald_proto::time::now_nanos;
use herald_router::RouteContext;

use crate::shared::Shared;

/// Appends `text` as one level of a subject: dots (which separate levels), wildcards,
/// white space and control characters become `_` (a host `dv01.example.org` is the one
/// level `dv01_example_org`).
pub fn push_subject_level(out: &mut String, text: &str) {
    // The same mapping as below for ASCII: its white space other than the space is a
    // control character.
    let keep = |byte: u8| !matches!(byte, b'.' | b'*' | b'?' | b' ') && !byte.is_ascii_control();
    if text.is_ascii() {
        // The usual case (host and program names): nothing to change, copied whole.
        if text.bytes().all(keep) {
            out.push_str(text);
            return;
        }
        out.reserve(text.len());
        for byte in text.bytes() {
            out.push(char::from(if keep(byte) { byte } else { b'_' }));
        }
        return;
    }
    out.extend(text.chars().map(|c| match c {
        '.' | '*' | '?' => '_',
        c if c.is_whitespace() || c.is_control() => '_',
        c => c,
    }));
}

/// Routes the records a front door made as a publisher's would be: log storms collapse and
/// sources over their quota are refused first ([`crate::storm`]). Returns how many records
/// the quotas refused.
pub async fn ingest(shared: &Shared, route: &mut RouteContext, records: &[RawRecord]) -> u64 {
    let storm = shared.storms.filter(records, 0, now_nanos(), true);
    match &storm.keep {
        None => route_batch(shared, route, records).await,
        Some(keep) => {
            let kept: Vec<RawRecord> = records
                .iter()
                .zip(keep)
                .filter(|(_, keep)| **keep)
                .map(|(record, _)| record.clone())
                .collect();
            route_batch(shared, route, &kept).await;
        }
    }
    route_batch(shared, route, &storm.marked).await;
    storm.refused
}

/// Routes `records` through `route`, offers them to the archive and counts them; waits (at
/// most each queue's block timeout) for subscribers with policy `block`.
pub async fn route_batch(shared: &Shared, route: &mut RouteContext, records: &[RawRecord]) {
    if records.is_empty() {
        return;
    }
    let received = now_nanos();
    let stats = shared.router.route(route, records, received);
    if let Some(archive) = &shared.archive {
        let offer = archive.offer(records.to_vec(), stats.first_seq, received, false);
        if offer.dropped > 0 {
            crate::events::archive_dropped(offer.dropped);
        }
    }
    let mut dropped = stats.dropped;
    let started = tokio::time::Instant::now();
    for (queue, blocked) in route.take_blocked() {
        dropped.merge(&queue.push_blocking(blocked, started).await);
    }
    if dropped.total() > 0 {
        crate::events::records_dropped(&shared.monitor, 0, &dropped);
    }
    let bytes: u64 = records.iter().map(|r| r.bytes.len() as u64).sum();
    let queued = stats.deliveries.saturating_sub(dropped.total());
    shared.monitor.count_batch(stats.records, bytes, queued);
}

#[cfg(test)]
mod tests {
    use super::push_subject_level;

    #[test]
    fn a_subject_level_maps_ascii_as_any_other_text() {
        let reference = |text: &str| -> String {
            text.chars()
                .map(|c| match c {
                    '.' | '*' | '?' => '_',
                    c if c.is_whitespace() || c.is_control() => '_',
                    c => c,
                })
                .collect()
        };
        let ascii: String = (0u8..128).map(char::from).collect();
        let mut out = String::from("syslog.");
        push_subject_level(&mut out, &ascii);
        assert_eq!(out, format!("syslog.{}", reference(&ascii)));
        // Not ASCII: the character path, the same mapping.
        let mixed = format!("{ascii}é\u{2003}x");
        out.clear();
        push_subject_level(&mut out, &mixed);
        assert_eq!(out, reference(&mixed));
        out.clear();
        push_subject_level(&mut out, "dv01.example.org");
        assert_eq!(out, "dv01_example_org");
    }
}
