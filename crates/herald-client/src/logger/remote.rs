//! Thresholds set from afar: `herald threshold PATTERN PRIORITY` publishes a message on
//! [`THRESHOLD_SUBJECT`] with the fields `subject` (a glob) and `threshold` (a priority
//! name); every logger whose subject the glob matches adopts the threshold. The message
//! travels like any other record, so it reaches loggers on every server it is routed to.

use std::sync::atomic::Ordering;
use std::sync::Weak;
use std::time::Duration;

use herald_proto::{Filter, Glob, Kind, KindSet, Priority, Record, Value};

use super::shared::{Shared, CLOSED};
use crate::{Client, Event};

/// Subject of threshold messages.
pub const THRESHOLD_SUBJECT: &str = "_HERALD.threshold";
/// How often an idle listener checks whether its logger is gone.
const LIVENESS_CHECK: Duration = Duration::from_secs(1);

/// Returns the message that sets the threshold of every logger whose subject matches
/// `loggers` to `threshold`.
pub fn threshold_message(loggers: &Glob, threshold: Priority) -> Record {
    Record {
        type_name: "threshold".to_string(),
        text: format!("loggers on {loggers}: threshold {threshold}"),
        fields: vec![
            (
                "subject".to_string(),
                Value::Str(loggers.as_str().to_string()),
            ),
            (
                "threshold".to_string(),
                Value::Str(threshold.name().to_string()),
            ),
        ],
        ..Record::new(Kind::Message, THRESHOLD_SUBJECT)
    }
}

/// Returns the threshold `record` sets for a logger on `subject`, if it is a threshold
/// message that concerns it.
fn threshold_for(record: &Record, subject: &str) -> Option<Priority> {
    let text = |name: &str| match record.fields.iter().find(|(n, _)| n == name) {
        Some((_, Value::Str(text))) => Some(text.as_str()),
        _ => None,
    };
    let pattern = Glob::new(text("subject")?).ok()?;
    if !pattern.matches(subject) {
        return None;
    }
    text("threshold")?.parse().ok()
}

/// As [`listen`], for a logger that makes its own connection: waits for its first one.
pub(super) async fn listen_once_connected(
    link: std::sync::Arc<super::link::LinkState>,
    shared: Weak<Shared>,
    subject: String,
) {
    loop {
        if let Some(client) = link.client() {
            return listen(client, shared, subject).await;
        }
        let closed = |s: std::sync::Arc<Shared>| s.threshold.load(Ordering::Relaxed) & CLOSED != 0;
        if shared.upgrade().is_none_or(closed) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Listens for threshold messages until the logger is closed or gone.
pub(super) async fn listen(client: Client, shared: Weak<Shared>, subject: String) {
    let filter = Filter {
        kinds: KindSet::from(Kind::Message),
        ..Filter::subject(THRESHOLD_SUBJECT).expect("a valid literal subject")
    };
    let mut subscription = match client.subscribe(filter).await {
        Ok(subscription) => subscription,
        Err(error) => {
            tracing::debug!(%error, "logger cannot listen for threshold messages");
            return;
        }
    };
    loop {
        let event = tokio::time::timeout(LIVENESS_CHECK, subscription.next()).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.threshold.load(Ordering::Relaxed) & CLOSED != 0 {
            return;
        }
        match event {
            Ok(Some(Event::Record(delivered))) => {
                if let Some(threshold) = threshold_for(delivered.record(), &subject) {
                    tracing::info!(%subject, %threshold, "logger threshold set remotely");
                    shared.set_threshold(threshold);
                }
            }
            Ok(Some(Event::Gap(_) | Event::Interrupted(_))) | Err(_) => {}
            Ok(None) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_concerns_the_loggers_its_glob_matches() {
        let message = threshold_message(&Glob::new("ANTENNA.*").unwrap(), Priority::Debug);
        assert_eq!(
            threshold_for(&message, "ANTENNA.DV01"),
            Some(Priority::Debug)
        );
        assert_eq!(threshold_for(&message, "CORRELATOR"), None);
        let bad = Record {
            fields: vec![],
            ..message
        };
        assert_eq!(threshold_for(&bad, "ANTENNA.DV01"), None);
    }
}
