//! `GET /ws/records`: a live tail over a WebSocket. The query becomes a router subscription
//! (`subject`, `type`, `priority`, `audience`, `kinds`); `host`, `process` and `text` are
//! checked here, before sending, and what they hold back is counted as `filtered` in the
//! monitor (not as a loss).
//!
//! Messages: `{"type":"hello",…}`, then `{"type":"records","records":[R,…]}` where R is the
//! JSON form of `herald tail --json`, and `{"type":"gap",…}` where records were lost.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::Extensions;
use axum::response::Response;
use herald_info::json::record_json;
use herald_proto::{Filter, FilterError, Record};
use herald_router::{Delivery, Gap, Subscription};
use serde::Deserialize;

use super::listener::PeerAddr;
use super::ws::{self, Browser, Render};
use super::HttpError;
use crate::command::subscribe::describe;
use crate::monitor::ConnectionState;
use crate::shared::Shared;

/// The query of `GET /ws/records`; every parameter is optional, and open when left out.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordsQuery {
    /// Subject glob.
    pub subject: Option<String>,
    /// Type glob.
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    /// Priority set: `>=WARNING`, `{DEBUG}`, `INFO..ERROR`.
    pub priority: Option<String>,
    /// Comma-separated audience names.
    pub audience: Option<String>,
    /// Comma-separated kinds: `log`, `message`, `info`.
    pub kinds: Option<String>,
    /// The origin's host, exactly.
    pub host: Option<String>,
    /// The origin's process, exactly.
    pub process: Option<String>,
    /// A substring of the text.
    pub text: Option<String>,
}

/// What the server checks itself before sending a record.
#[derive(Debug, Default, Clone)]
pub struct LocalFilter {
    host: Option<String>,
    process: Option<String>,
    text: Option<String>,
}

impl LocalFilter {
    /// Returns true if `record` passes every filter given.
    pub fn matches(&self, record: &Record) -> bool {
        let exact =
            |wanted: &Option<String>, value: &str| wanted.as_deref().is_none_or(|w| w == value);
        exact(&self.host, &record.origin.host)
            && exact(&self.process, &record.origin.process)
            && self
                .text
                .as_deref()
                .is_none_or(|text| record.text.contains(text))
    }

    fn describe(&self) -> String {
        let parts = [
            ("host", &self.host),
            ("process", &self.process),
            ("text", &self.text),
        ];
        parts
            .iter()
            .filter_map(|(name, value)| value.as_ref().map(|v| format!(" {name}={v}")))
            .collect()
    }
}

impl RecordsQuery {
    /// Returns the router filter and the local one.
    ///
    /// # Errors
    /// A `bad_query` error naming the parameter that does not parse.
    pub fn filters(self) -> Result<(Filter, LocalFilter), HttpError> {
        let audience: Vec<String> = self
            .audience
            .as_deref()
            .map(|list| list.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        let filter = Filter::parse(
            self.subject.as_deref(),
            self.type_name.as_deref(),
            self.priority.as_deref(),
            &audience,
            self.kinds.as_deref(),
        )
        .map_err(|error| {
            let parameter = match &error {
                FilterError::Subject(_) => "subject",
                FilterError::Type(_) => "type",
                FilterError::Priority(_) => "priority",
                FilterError::Kind(_) => "kinds",
                FilterError::Audience(_) => "audience",
                _ => "query",
            };
            HttpError::bad_request("bad_query", format!("`{parameter}`: {error}"))
        })?;
        let local = LocalFilter {
            host: self.host,
            process: self.process,
            text: self.text,
        };
        Ok((filter, local))
    }
}

/// Returns the peer address axum recorded, if it did (not under `Router::oneshot`).
pub fn peer(extensions: &Extensions) -> SocketAddr {
    extensions
        .get::<ConnectInfo<PeerAddr>>()
        .map_or(SocketAddr::from(([0, 0, 0, 0], 0)), |info| info.0 .0)
}

/// Returns the error for a request that is not a WebSocket upgrade.
pub fn not_websocket(rejection: WebSocketUpgradeRejection) -> HttpError {
    let message = format!("this route needs a WebSocket upgrade: {rejection}");
    HttpError::new(rejection.status(), "not_websocket", message)
}

/// `GET /ws/records?subject=&type=&priority=&audience=&kinds=&host=&process=&text=`.
pub async fn upgrade(
    State(shared): State<Arc<Shared>>,
    extensions: Extensions,
    query: Result<Query<RecordsQuery>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, HttpError> {
    let Query(query) = query?;
    let (filter, local) = query.filters()?;
    let upgrade = upgrade.map_err(not_websocket)?;
    let peer = peer(&extensions);
    let access = super::caller::access(&extensions);
    let upgrade = ws::accept(upgrade);
    Ok(upgrade.on_upgrade(move |socket| async move {
        let (visible, visible_info) = (access.visible_subjects(), access.visible_objects());
        let description = format!(
            "{}{}",
            describe(&filter, &ws::queue_config(&shared)),
            local.describe()
        );
        let browser = Browser::open(shared, peer, description, access);
        browser.shared.router.subscribe(Arc::new(Subscription {
            connection: browser.id(),
            id: ws::SUBSCRIPTION_ID,
            filter,
            queue: Arc::clone(&browser.queue),
            visible,
            visible_info,
            route: false,
            group: None,
        }));
        let render = RecordsRender {
            local,
            state: Arc::clone(&browser.state),
        };
        ws::run(browser, socket, render).await;
    }))
}

/// Renders records as `records` messages, after the local filter.
struct RecordsRender {
    local: LocalFilter,
    state: Arc<ConnectionState>,
}

impl Render for RecordsRender {
    fn render(&mut self, gap: Option<&Gap>, deliveries: &[Delivery], messages: &mut Vec<String>) {
        if let Some(gap) = gap {
            messages.push(ws::gap_message(gap));
        }
        let mut filtered = 0;
        let mut items = Vec::with_capacity(deliveries.len());
        for delivery in deliveries {
            // The router only queues records that decoded when they came in.
            let Ok(record) = Record::from_bytes(&delivery.record) else {
                continue;
            };
            if !self.local.matches(&record) {
                filtered += 1;
                continue;
            }
            items.push(record_json(&record, delivery.seq, delivery.received).to_string());
        }
        if let Some(counter) = &self.state.filtered {
            counter.fetch_add(filtered, Ordering::Relaxed);
        }
        ws::batch_messages("records", "records", items, messages);
    }
}
