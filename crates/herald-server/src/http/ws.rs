//! What the WebSocket routes share: a [`Browser`] connection, registered with the router and
//! the monitor like a native client with one subscription, and [`run`], the pump that
//! drains its queue into JSON text messages, pings the browser and notices when it is gone.
//!
//! A browser gets its own bounded queue, as a native subscriber does, and the same
//! accounting: what does not fit is shed (lowest priorities first), counted in the monitor
//! and reported to the browser as a `gap` message before the records that follow. The
//! policy is always `drop-new`: `block` would let a slow browser hold up publishers, and a
//! browser has no way to ask for another.
//!
//! Two tasks serve a socket: the writer (here, [`run`]) and a reader that only watches for
//! the close, errors and silence. So a browser whose socket is full only stalls its own
//! writer, while its queue fills and drops, and a dead one is noticed even then.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use herald_proto::time::now_nanos;
use herald_proto::Policy;
use herald_router::{Delivery, Gap, Queue, QueueConfig};
use serde_json::{json, Map, Value as Json};
use tokio::sync::watch;

use crate::events::{self, CloseReason};
use crate::monitor::{ConnectionState, SubscriptionState};
use crate::shared::Shared;
use crate::shutdown::Shutdown;

/// How often the server pings a browser.
pub const PING_INTERVAL: Duration = Duration::from_secs(5);
/// How long a browser may stay silent (not even a pong) before it is taken for dead.
pub const SILENCE_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest message taken from a browser; anything it says is ignored anyway.
pub const MAX_INCOMING_BYTES: usize = 64 * 1024;
/// Most records (or info changes) in one message.
pub const MESSAGE_RECORDS: usize = 1_000;
/// Bytes of JSON after which a message is closed and the next one begun.
pub const MESSAGE_BYTES: usize = 256 * 1024;
/// The id of a browser connection's one subscription.
pub const SUBSCRIPTION_ID: u64 = 1;
/// How long the goodbye (a close frame) may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Turns what the queue hands over into the JSON text messages sent to the browser.
pub trait Render: Send {
    /// Appends the messages for a pending `gap` (first) and `deliveries` to `messages`.
    fn render(&mut self, gap: Option<&Gap>, deliveries: &[Delivery], messages: &mut Vec<String>);
}

/// A browser's WebSocket, registered as a connection with one subscription; dropping it
/// removes the subscription everywhere and counts what was still queued as lost.
pub struct Browser {
    /// Server-wide state.
    pub shared: Arc<Shared>,
    /// The connection as the monitor shows it.
    pub state: Arc<ConnectionState>,
    /// The one subscription's queue, drained by [`run`].
    pub queue: Arc<Queue>,
    /// Why it closed, for the monitor's `closes`; set by [`run`].
    reason: CloseReason,
}

impl Browser {
    /// Registers a connection from `peer`, named `browser <peer>`, whose subscription the
    /// monitor shows as `description`. The caller subscribes [`Browser::queue`].
    pub fn open(
        shared: Arc<Shared>,
        peer: SocketAddr,
        description: String,
        access: crate::auth::Access,
    ) -> Browser {
        let id = shared.next_connection_id();
        let state = Arc::new(ConnectionState::browser(
            id,
            peer,
            format!("browser {peer}"),
        ));
        let _ = state.access.set(access);
        let queue = Queue::with_budget(
            queue_config(&shared),
            Arc::clone(&state.writer),
            Arc::clone(&shared.queue_budget),
        );
        state.subscriptions().push(SubscriptionState {
            id: SUBSCRIPTION_ID,
            filter: description,
            queue: Arc::clone(&queue),
            group: None,
        });
        shared.monitor.add_connection(Arc::clone(&state));
        if state
            .access
            .get()
            .is_some_and(|a| !shared.guard.still_valid(a))
        {
            state.revoked.notify_one();
        }
        tracing::debug!(connection = id, %peer, "browser connected");
        Browser {
            shared,
            state,
            queue,
            reason: CloseReason::ClientClosed,
        }
    }

    /// Returns the connection's server-wide id.
    pub fn id(&self) -> u64 {
        self.state.id
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        crate::closing::unregister(&self.shared, &self.state, self.reason);
        let (id, peer) = (self.state.id, self.state.peer);
        events::connection_closed(&self.shared.monitor, id, peer, self.reason, "websocket");
    }
}

/// Returns the queue of a browser connection: the server's default bounds, policy
/// `drop-new` whatever the default policy.
pub fn queue_config(shared: &Shared) -> QueueConfig {
    QueueConfig {
        policy: Policy::DropNew,
        latest_interval: None,
        ..shared.config().queue
    }
}

type Sink = SplitSink<WebSocket, Message>;
type Ended = watch::Receiver<Option<CloseReason>>;

/// Serves `socket` until the browser closes it, goes silent or the server shuts down:
/// a `hello` message, then whatever `render` makes of the queue, and a ping every
/// [`PING_INTERVAL`].
pub async fn run(mut browser: Browser, socket: WebSocket, mut render: impl Render) {
    let (mut sink, stream) = socket.split();
    let (ended_sender, mut ended) = watch::channel(None);
    let reader = tokio::spawn(read(stream, ended_sender));
    let mut shutdown = browser.shared.shutdown_signal();
    let reason = write(&browser, &mut sink, &mut ended, &mut shutdown, &mut render).await;
    reader.abort();
    browser.reason = reason;
    let goodbye = async {
        let said = match reason {
            CloseReason::ServerShutdown => Some((
                axum::extract::ws::close_code::AWAY,
                "the server is shutting down",
            )),
            CloseReason::Revoked => Some((
                axum::extract::ws::close_code::POLICY,
                "the token was revoked or its permissions changed",
            )),
            _ => None,
        };
        if let Some((code, reason)) = said {
            let frame = CloseFrame {
                code,
                reason: reason.into(),
            };
            let _ = sink.send(Message::Close(Some(frame))).await;
        }
        let _ = sink.close().await;
    };
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, goodbye).await;
}

/// Reads until the browser closes, fails or is silent for [`SILENCE_TIMEOUT`]; says why.
async fn read(mut stream: SplitStream<WebSocket>, ended: watch::Sender<Option<CloseReason>>) {
    let reason = loop {
        match tokio::time::timeout(SILENCE_TIMEOUT, stream.next()).await {
            Err(_) => break CloseReason::HeartbeatTimeout,
            Ok(None | Some(Ok(Message::Close(_)))) => break CloseReason::ClientClosed,
            Ok(Some(Err(_))) => break CloseReason::IoError,
            // Pongs keep it alive; anything else a browser says is ignored.
            Ok(Some(Ok(_))) => {}
        }
    };
    let _ = ended.send(Some(reason));
}

/// Waits for the reader to say the browser is gone.
async fn gone(ended: &mut Ended) -> CloseReason {
    match ended.wait_for(Option::is_some).await {
        Ok(reason) => reason.unwrap_or(CloseReason::IoError),
        Err(_) => CloseReason::IoError,
    }
}

/// The writer's loop; returns why it ended.
async fn write(
    browser: &Browser,
    sink: &mut Sink,
    ended: &mut Ended,
    shutdown: &mut Shutdown,
    render: &mut impl Render,
) -> CloseReason {
    let hello = json!({
        "type": "hello",
        "server": browser.shared.config().name,
        "time_ns": now_nanos(),
    });
    let mut messages = vec![Message::Text(hello.to_string().into())];
    let mut texts = Vec::new();
    let mut scratch = Vec::new();
    let mut ping = tokio::time::interval(PING_INTERVAL);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ping.tick().await;
    loop {
        loop {
            for (member, gap) in browser.queue.take_remote_gaps() {
                texts.push(remote_gap_message(&member, &gap));
            }
            let gap = browser
                .queue
                .drain(&mut scratch, crate::writer::DRAIN_BYTES);
            render.render(gap.as_ref(), &scratch, &mut texts);
            scratch.clear();
            messages.extend(texts.drain(..).map(|text| Message::Text(text.into())));
            if messages.is_empty() {
                break;
            }
            for message in messages.drain(..) {
                tokio::select! {
                    reason = gone(ended) => return reason,
                    () = shutdown.recv() => return CloseReason::ServerShutdown,
                    sent = sink.send(message) => if sent.is_err() {
                        return CloseReason::IoError;
                    },
                }
            }
        }
        tokio::select! {
            reason = gone(ended) => return reason,
            () = shutdown.recv() => return CloseReason::ServerShutdown,
            () = browser.state.revoked.notified() => return CloseReason::Revoked,
            _ = ping.tick() => messages.push(Message::Ping(Default::default())),
            () = browser.state.writer.notified() => {}
        }
    }
}

/// Sets what every WebSocket of the server accepts: the message size, and the subprotocol
/// `herald` that a browser names (beside `bearer.<token>`) to present its token.
pub fn accept(upgrade: WebSocketUpgrade) -> WebSocketUpgrade {
    upgrade
        .max_message_size(MAX_INCOMING_BYTES)
        .protocols([PROTOCOL])
}

/// The WebSocket subprotocol Herald's browser routes speak.
pub const PROTOCOL: &str = "herald";

/// Returns the `gap` message for records cluster member `member` lost on its route to this
/// server: as [`gap_message`], with `member` (and that member's sequence numbers).
pub fn remote_gap_message(member: &str, gap: &Gap) -> String {
    let mut message: Json = serde_json::from_str(&gap_message(gap)).expect("JSON we made");
    message["member"] = json!(member);
    message.to_string()
}

/// Returns the `gap` message: how many records were lost, of which priorities, between
/// which sequence numbers — what a native `GAP` frame says.
pub fn gap_message(gap: &Gap) -> String {
    let notice = crate::writer::gap_notice(SUBSCRIPTION_ID, gap);
    let priorities: Map<String, Json> = notice
        .by_priority
        .iter()
        .map(|(priority, count)| (priority.name().to_string(), json!(count)))
        .collect();
    json!({
        "type": "gap",
        "count": notice.count,
        "priorities": priorities,
        "first_seq": notice.first_seq,
        "last_seq": notice.last_seq,
    })
    .to_string()
}

/// Joins JSON `items` into messages `{"type": TYPE, KEY: [item, …]}` of at most
/// [`MESSAGE_RECORDS`] items, closed once past [`MESSAGE_BYTES`].
pub fn batch_messages(
    message_type: &str,
    key: &str,
    items: impl IntoIterator<Item = String>,
    messages: &mut Vec<String>,
) {
    let head = format!("{{\"type\":\"{message_type}\",\"{key}\":[");
    let mut current = String::new();
    let mut count = 0;
    for item in items {
        if current.is_empty() {
            current.push_str(&head);
        } else {
            current.push(',');
        }
        current.push_str(&item);
        count += 1;
        if count == MESSAGE_RECORDS || current.len() >= MESSAGE_BYTES {
            current.push_str("]}");
            messages.push(std::mem::take(&mut current));
            count = 0;
        }
    }
    if !current.is_empty() {
        current.push_str("]}");
        messages.push(current);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_stay_within_the_record_limit() {
        let mut messages = Vec::new();
        let items = (0..2_500).map(|n| n.to_string());
        batch_messages("records", "records", items, &mut messages);
        let lengths: Vec<usize> = messages
            .iter()
            .map(|m| {
                let json: Json = serde_json::from_str(m).unwrap();
                assert_eq!(json["type"], "records");
                json["records"].as_array().unwrap().len()
            })
            .collect();
        assert_eq!(lengths, [1_000, 1_000, 500]);
    }

    #[test]
    fn a_gap_names_its_priorities() {
        let mut gap = Gap {
            count: 3,
            first_seq: 10,
            last_seq: 14,
            ..Gap::default()
        };
        gap.by_priority[herald_proto::Priority::Debug as usize] = 2;
        gap.by_priority[herald_proto::Priority::Info as usize] = 1;
        let json: Json = serde_json::from_str(&gap_message(&gap)).unwrap();
        assert_eq!(
            json,
            json!({"type": "gap", "count": 3, "priorities": {"DEBUG": 2, "INFO": 1},
                   "first_seq": 10, "last_seq": 14})
        );
    }
}
