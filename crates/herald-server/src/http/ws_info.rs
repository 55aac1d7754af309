//! `GET /ws/info?match=&type=&combine=`: an info subscription over a WebSocket, with the
//! selection of `GET /info`. Through the native `INFO_SUBSCRIBE` machinery
//! ([`InfoService::subscribe`](crate::info::InfoService::subscribe)) the browser first gets
//! the current value of every matching object, then every change, none lost or repeated
//! between the two.
//!
//! Messages: `{"type":"hello",…}`, then `{"type":"info","changes":[{"reason","object"},…]}`
//! where `reason` is `snapshot`, `created`, `updated` or `deleted` and `object` the JSON of
//! `GET /info/{name}`; and `{"type":"gap",…}` if the queue overflowed.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::http::Extensions;
use axum::response::Response;
use herald_info::json::object_json;
use herald_info::Selection;
use herald_proto::info::{ObjectData, SelectionData};
use herald_proto::Record;
use herald_router::{Delivery, Gap};
use serde_json::{json, Value as Json};

use super::info::{Combine, ListQuery};
use super::ws::{self, Browser, Render};
use super::ws_records::{not_websocket, peer};
use super::HttpError;
use crate::command::info::describe;
use crate::shared::Shared;

/// `GET /ws/info?match=&type=&combine=`.
pub async fn upgrade(
    State(shared): State<Arc<Shared>>,
    extensions: Extensions,
    query: Result<Query<ListQuery>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, HttpError> {
    let Query(query) = query?;
    let selection = SelectionData {
        name_regex: query.name_regex,
        types: query.types,
        any: matches!(query.combine, Combine::Or),
    };
    // Checked now, so a bad selection is a 400 with the codes of `GET /info`.
    Selection::from_data(&selection)?;
    let upgrade = upgrade.map_err(not_websocket)?;
    let peer = peer(&extensions);
    let access = super::caller::access(&extensions);
    let upgrade = ws::accept(upgrade);
    Ok(upgrade.on_upgrade(move |socket| async move {
        let visible = access.visible_objects();
        let browser = Browser::open(shared, peer, describe(&selection), access);
        let shared = &browser.shared;
        let queue = Arc::clone(&browser.queue);
        let subscribed = shared.info.subscribe(
            browser.id(),
            ws::SUBSCRIPTION_ID,
            &selection,
            visible,
            queue,
            &shared.router,
        );
        if let Err((_, error)) = subscribed {
            // Checked before the upgrade; only a broken invariant gets here.
            tracing::warn!(%error, "cannot subscribe a browser to info objects");
            return;
        }
        ws::run(browser, socket, InfoRender).await;
    }))
}

/// Returns one change of an info record: `{"reason", "object"}`.
pub fn change_json(record: Record) -> Json {
    let object = ObjectData {
        name: record.subject,
        type_name: record.type_name,
        time: record.time,
        version: record.id.unwrap_or_default(),
        attributes: record.fields,
    };
    json!({ "reason": record.text, "object": object_json(&object) })
}

/// Renders info records as `info` messages.
struct InfoRender;

impl Render for InfoRender {
    fn render(&mut self, gap: Option<&Gap>, deliveries: &[Delivery], messages: &mut Vec<String>) {
        if let Some(gap) = gap {
            messages.push(ws::gap_message(gap));
        }
        let changes = deliveries
            .iter()
            .filter_map(|delivery| Record::from_bytes(&delivery.record).ok())
            .map(|record| change_json(record).to_string());
        ws::batch_messages("info", "changes", changes, messages);
    }
}
