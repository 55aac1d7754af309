//! `SUBSCRIBE`: add a subscription with its own bounded queue.

use std::sync::Arc;

use herald_proto::frame::Subscribe;
use herald_proto::{ErrorCode, ErrorFrame, Filter, Frame};
use herald_router::{Queue, Subscription};

use crate::monitor::SubscriptionState;
use crate::session::{Close, Session};

pub(super) async fn apply(session: &mut Session, subscribe: Subscribe) -> Result<(), Close> {
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
    let config = &session.shared.config;
    let mut subscriptions = session.state.subscriptions();
    if subscriptions.iter().any(|s| s.id == subscribe.subscription) {
        let message = format!(
            "subscription id {} is already in use on this connection",
            subscribe.subscription
        );
        return Err((ErrorCode::BadSubscription, message));
    }
    if subscriptions.len() >= config.max_subscriptions {
        let message = format!(
            "too many subscriptions on this connection (limit {})",
            config.max_subscriptions
        );
        return Err((ErrorCode::Limit, message));
    }
    let queue = Arc::new(Queue::new(config.queue, Arc::clone(&session.state.writer)));
    subscriptions.push(SubscriptionState {
        id: subscribe.subscription,
        filter: describe(&subscribe.filter),
        queue: Arc::clone(&queue),
    });
    drop(subscriptions);
    session.shared.router.subscribe(Arc::new(Subscription {
        connection: session.state.id,
        id: subscribe.subscription,
        filter: subscribe.filter.clone(),
        queue,
    }));
    Ok(())
}

/// Writes a filter the way `herald tail` options would spell it.
fn describe(filter: &Filter) -> String {
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
    parts.join(" ")
}
