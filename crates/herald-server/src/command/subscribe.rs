//! `SUBSCRIBE`: add a subscription with its own bounded queue.

use std::sync::Arc;

use herald_proto::frame::Subscribe;
use std::time::Duration;

use herald_proto::{DeliveryOptions, ErrorCode, ErrorFrame, Filter, Frame};
use herald_router::{Queue, QueueConfig, Subscription};

use crate::auth::Operation;
use crate::Config;

use crate::monitor::SubscriptionState;
use crate::session_state::{Close, Session};

pub(super) async fn apply(session: &mut Session, subscribe: Subscribe) -> Result<(), Close> {
    let subject = subscribe.filter.subject.as_str();
    if let Err(message) = session.access.check(Operation::Subscribe, subject) {
        super::deny(session, subscribe.cid, message).await;
        return Ok(());
    }
    let reply = match add(session, &subscribe) {
        Ok(()) => Frame::Ok { cid: subscribe.cid },
        Err((code, message)) => Frame::Error(ErrorFrame {
            cid: subscribe.cid,
            code,
            message,
        }),
    };
    session.reply(reply).await;
    Ok(())
}

fn add(session: &Session, subscribe: &Subscribe) -> Result<(), (ErrorCode, String)> {
    let queue_config = queue_config(&session.shared.config(), &subscribe.options);
    let mut description = describe(&subscribe.filter, &queue_config);
    let group = subscribe.options.group.clone();
    if let Some(group) = &group {
        description.push_str(&format!(" group={group}"));
    }
    let queue = reserve(
        session,
        subscribe.subscription,
        description,
        queue_config,
        group,
    )?;
    session.shared.router.subscribe(Arc::new(Subscription {
        connection: session.state.id,
        id: subscribe.subscription,
        filter: subscribe.filter.clone(),
        queue,
        // Narrowed to what the identity may see (docs/security.md).
        visible: session.access.visible_subjects(),
        visible_info: session.access.visible_objects(),
        route: false,
        group: subscribe.options.group.clone(),
    }));
    Ok(())
}

/// Checks that subscription `id` is free and under the connection's limit, and gives it a
/// queue drained by the connection's writer. Shared by record and info subscriptions.
pub(super) fn reserve(
    session: &Session,
    id: u64,
    description: String,
    queue_config: QueueConfig,
    group: Option<Arc<str>>,
) -> Result<Arc<Queue>, (ErrorCode, String)> {
    let config = &session.shared.config();
    let mut subscriptions = session.state.subscriptions();
    if subscriptions.iter().any(|s| s.id == id) {
        let message = format!("subscription id {id} is already in use on this connection");
        return Err((ErrorCode::BadSubscription, message));
    }
    if subscriptions.len() >= config.max_subscriptions {
        let message = format!(
            "too many subscriptions on this connection (limit {})",
            config.max_subscriptions
        );
        return Err((ErrorCode::Limit, message));
    }
    let queue = Queue::with_budget(
        queue_config,
        Arc::clone(&session.state.writer),
        Arc::clone(&session.shared.queue_budget),
    );
    subscriptions.push(SubscriptionState {
        id,
        filter: description,
        queue: Arc::clone(&queue),
        group,
    });
    Ok(queue)
}

/// Returns the queue a subscriber asked for, within the server's bounds: it may ask for a
/// smaller queue, never a larger one, and for a block timeout up to `max_block_timeout`.
fn queue_config(config: &Config, options: &DeliveryOptions) -> QueueConfig {
    let server = config.queue;
    let capped =
        |asked: Option<u64>, limit: usize| asked.map_or(limit, |n| (n as usize).min(limit));
    let block_timeout = options
        .block_timeout_ms
        .map_or(server.block_timeout, Duration::from_millis)
        .min(config.max_block_timeout);
    QueueConfig {
        max_records: capped(options.max_records, server.max_records),
        max_bytes: capped(options.max_bytes, server.max_bytes),
        policy: options.policy,
        protected: options.protected.unwrap_or(server.protected),
        block_timeout,
        latest_interval: options
            .latest_per_second
            .map(|rate| Duration::from_secs_f64(1.0 / rate)),
        ..server
    }
}

/// Writes a filter and its delivery the way `herald tail` options would spell them.
pub(crate) fn describe(filter: &Filter, queue: &QueueConfig) -> String {
    let mut parts = vec![format!("subject={}", filter.subject)];
    if !filter.type_name.is_any() {
        parts.push(format!("type={}", filter.type_name));
    }
    parts.push(format!("priority={}", filter.priorities));
    if !filter.audience.is_empty() {
        parts.push(format!("audience={}", filter.audience.join(",")));
    }
    if filter.kinds != herald_proto::KindSet::ALL {
        let kinds: Vec<&str> = [
            herald_proto::Kind::Log,
            herald_proto::Kind::Message,
            herald_proto::Kind::Info,
        ]
        .into_iter()
        .filter(|k| filter.kinds.contains(*k))
        .map(herald_proto::Kind::name)
        .collect();
        parts.push(format!("kind={}", kinds.join(",")));
    }
    parts.push(format!("policy={}", queue.policy));
    if let Some(interval) = queue.latest_interval {
        parts.push(format!("latest={:.3}/s", 1.0 / interval.as_secs_f64()));
    }
    parts.join(" ")
}
