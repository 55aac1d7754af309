//! The HTTP front door, on its own port (default `127.0.0.1:7480`): the information service
//! as JSON and XML, the archive, the monitor, live WebSockets for the browser UI and the
//! UI's files; later ingest and metrics.
//!
//! | route | answer |
//! |---|---|
//! | `GET /info/{name}` | the object as JSON; `?format=xml` as Information-Service XML |
//! | `GET /info?match=REGEX&type=SEL&combine=and\|or` | a JSON array of the selected objects, by name, streamed 1,000 objects at a time |
//! | `PUT /info/{name}` | creates or updates the object from a JSON body; answers with it |
//! | `DELETE /info/{name}` | deletes the object; answers with it as it was |
//! | `GET /info-types` | a JSON array of the declared types |
//! | `GET /archive/samples/{name}`, `/archive/logs`, `/archive/at` | archive queries ([`archive`]) |
//! | `GET /monitor` | the monitor's snapshot as JSON |
//! | `GET /ws/records?subject=&type=&priority=&audience=&kinds=&host=&process=&text=` | WebSocket live tail |
//! | `GET /ws/info?match=&type=&combine=` | WebSocket info subscription: snapshot, then changes |
//! | `GET /`, `GET /ui/{*path}` | the browser UI's embedded files |
//!
//! Every error is JSON `{"error": "<message>", "code": "<snake_case>"}` with a fitting status
//! ([`error`]). Changes go through [`InfoService::execute`](crate::info::InfoService::execute),
//! as the native protocol's do, so info subscribers and ordinary subscribers see them.
//!
//! # Layout
//! - [`archive`]: the archive queries, as JSON pages or NDJSON/CSV streams.
//! - [`assets`]: the UI's files, embedded by `build.rs` from `ui/`.
//! - [`caller`]: the caller's token (`Authorization: Bearer`) and the route's permission.
//! - [`error`]: [`HttpError`], the JSON error and the status of each problem.
//! - [`info`]: `GET`/`DELETE /info/{name}`, `GET /info`, `GET /info-types`.
//! - [`info_update`]: `PUT /info/{name}`, the JSON body and its conversion.
//! - [`listener`]: [`CuttableStream`], connections the server can cut when a request
//!   outlasts the shutdown grace period; [`PeerAddr`], the remote address.
//! - [`serve`]: the accept loop and one task per connection, with the HTTP limits
//!   (connections in all and per address, a deadline for each request's head).
//! - [`monitor`]: `GET /monitor`.
//! - [`percent`]: a bad percent-encoding in a path or query is a 400 that names it.
//! - [`ws`]: what both WebSocket routes share: a browser connection in the monitor, its
//!   queue, the pump from queue to JSON messages, pings.
//! - [`ws_records`]: `GET /ws/records`, the live tail.
//! - [`ws_info`]: `GET /ws/info`, the info subscription.

pub mod archive;
pub mod assets;
pub mod caller;
pub mod error;
pub mod info;
pub mod info_update;
pub mod listener;
pub mod metrics;
pub mod monitor;
pub mod percent;
pub mod serve;
pub mod ws;
pub mod ws_info;
pub mod ws_records;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::routing::get;
use herald_proto::info::{InfoReply, InfoRequest};
use herald_router::RouteContext;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use error::HttpError;
pub use listener::{CuttableStream, PeerAddr};

use crate::events;
use crate::shared::Shared;
use crate::shutdown::Shutdown;

pub use caller::HTTP_CONNECTION_ID;

/// Returns the routes, sharing `shared` with the native protocol.
pub fn router(shared: Arc<Shared>) -> axum::Router {
    let body_limit = shared.config().max_frame_bytes as usize;
    axum::Router::new()
        .route("/info", get(info::list))
        .route(
            "/info/{name}",
            get(info::get).put(info_update::put).delete(info::delete),
        )
        .route("/info-types", get(info::types))
        .route("/archive/samples/{name}", get(archive::samples))
        .route("/archive/logs", get(archive::logs))
        .route("/archive/at", get(archive::at))
        .route("/monitor", get(monitor::get))
        .route("/metrics", get(metrics::get))
        .route("/v1/logs", axum::routing::post(crate::otlp::logs))
        .route("/ws/records", get(ws_records::upgrade))
        .route("/ws/info", get(ws_info::upgrade))
        .route("/", get(assets::index))
        .route("/ui/{*path}", get(assets::file))
        .fallback(unknown_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&shared),
            caller::check,
        ))
        .layer(axum::middleware::from_fn(percent::check))
        .with_state(shared)
}

/// Serves HTTP on `listener` until shutdown; then stops accepting and lets requests in
/// flight finish, until `cut` ends the connections still open.
pub async fn run(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: Shutdown,
    cut: watch::Receiver<bool>,
) {
    let app = router(Arc::clone(&shared));
    serve::run(listener, app, serve::Protocol::Http1, shared, shutdown, cut).await;
}

/// Applies an information-service request as a publisher of its own: changes are routed to
/// ordinary subscribers (waiting, as a native publisher would, for those with policy
/// `block`) and queued for info subscribers.
pub(crate) async fn apply(shared: &Shared, request: InfoRequest) -> Result<InfoReply, HttpError> {
    if let Some(message) = crate::command::info::read_only(shared, &request) {
        return Err(HttpError::new(
            axum::http::StatusCode::FORBIDDEN,
            "read_only",
            message,
        ));
    }
    let cluster = shared.cluster.get();
    // In a cluster, a change of another member's namespace is that member's to make.
    if let Some(cluster) = cluster {
        use crate::cluster::info::Placement;
        match cluster.info.place(cluster, &request) {
            Placement::Here => {}
            Placement::There(link) => {
                return cluster
                    .info
                    .forward(&link, request)
                    .await
                    .map_err(|(code, message)| HttpError::forwarded(code, message));
            }
            Placement::Nowhere(message) => {
                return Err(HttpError::forwarded(
                    herald_proto::ErrorCode::Unavailable,
                    message,
                ))
            }
        }
    }
    let declared = matches!(request, InfoRequest::Declare(_)).then(|| request.clone());
    let mut context = RouteContext::default();
    let reply = shared.info.execute(request, &shared.router, &mut context)?;
    if let Some(cluster) = cluster {
        if let Some(declared) = &declared {
            cluster.info.declared(cluster, declared);
        }
        let saver = &cluster.info.saver;
        saver.saved(saver.last()).await;
    }
    let started = tokio::time::Instant::now();
    for (queue, blocked) in context.take_blocked() {
        let drops = queue.push_blocking(blocked, started).await;
        if drops.total() > 0 {
            events::records_dropped(&shared.monitor, HTTP_CONNECTION_ID, &drops);
        }
    }
    Ok(reply)
}

async fn unknown_route(method: Method, uri: Uri) -> HttpError {
    HttpError::new(
        axum::http::StatusCode::NOT_FOUND,
        "unknown_route",
        format!("no route for {method} `{}`", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> HttpError {
    HttpError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("method {method} is not allowed on `{}`", uri.path()),
    )
}
