//! Who is calling over HTTP, and may they: every request but the UI's files presents a
//! token as `Authorization: Bearer <token>` (a browser's WebSocket, which cannot set that
//! header, as the subprotocol `bearer.<token>` beside `herald`); a server without
//! identities needs none. The route's permission is checked here (`401 unauthorized`,
//! `403 denied`, each naming the problem); routes that narrow what they show (lists, the
//! WebSockets) read the caller's [`Access`] from the request's extensions.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::HttpError;
use super::listener::ClientCertificate;
use crate::auth::{Access, Operation};
use crate::events;
use crate::shared::Shared;

/// The connection id that changes made over HTTP are counted under in the monitor's events
/// (sessions are numbered from 1).
pub const HTTP_CONNECTION_ID: u64 = 0;

/// The WebSocket subprotocol prefix that carries a token.
pub const BEARER_PROTOCOL_PREFIX: &str = "bearer.";

/// Checks the caller of every request but the UI's files; passes the request on with its
/// [`Access`] in the extensions.
pub async fn check(
    State(shared): State<Arc<Shared>>,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if path == "/" || path.starts_with("/ui/") {
        return next.run(request).await;
    }
    let token = token(request.headers()).unwrap_or_default();
    let certificate = request.extensions().get::<ClientCertificate>();
    let certificate = certificate.map(|c| c.0.as_str());
    let access = match shared.guard.authenticate(&token, certificate) {
        Ok(access) => access,
        Err(message) => {
            let error = HttpError::new(StatusCode::UNAUTHORIZED, "unauthorized", message);
            let mut response = error.into_response();
            let challenge = "Bearer realm=\"herald\"".parse().expect("a valid header");
            response.headers_mut().insert(WWW_AUTHENTICATE, challenge);
            return response;
        }
    };
    if let Some((operation, what)) = operation(request.method(), path) {
        if let Err(message) = access.check(operation, &what) {
            events::denied(&shared.monitor, HTTP_CONNECTION_ID, &message);
            events::request_refused(&shared.monitor, HTTP_CONNECTION_ID, &message);
            return HttpError::new(StatusCode::FORBIDDEN, "denied", message).into_response();
        }
    }
    request.extensions_mut().insert(access);
    next.run(request).await
}

/// The caller's access, as [`check`] left it (open where it did not run: tests of a
/// handler alone).
pub fn access(extensions: &axum::http::Extensions) -> Access {
    extensions.get::<Access>().cloned().unwrap_or(Access::Open)
}

/// The token of `Authorization: Bearer`, or of a `bearer.` WebSocket subprotocol.
pub(crate) fn token(headers: &HeaderMap) -> Option<String> {
    if let Some(value) = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        let (scheme, token) = value.trim().split_once(' ')?;
        return scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim().to_string());
    }
    let protocols = headers.get(SEC_WEBSOCKET_PROTOCOL)?.to_str().ok()?;
    protocols
        .split(',')
        .map(str::trim)
        .find_map(|p| p.strip_prefix(BEARER_PROTOCOL_PREFIX))
        .map(str::to_string)
}

/// The permission a route needs, and what it is about, when the route as a whole needs
/// one; lists and WebSockets narrow what they show instead.
fn operation(method: &Method, path: &str) -> Option<(Operation, String)> {
    if path.starts_with("/archive/") {
        return Some((Operation::Query, String::new()));
    }
    if path == "/monitor" || path == "/metrics" {
        let what = format!("see the server's connections and counters (GET {path})");
        return Some((Operation::Admin, what));
    }
    if path == "/ws/records" {
        return Some((Operation::Subscribe, "/ws/records".to_string()));
    }
    let name = decode(path.strip_prefix("/info/")?);
    match *method {
        Method::GET | Method::HEAD => Some((Operation::InfoRead, name)),
        _ => Some((Operation::InfoWrite, name)),
    }
}

/// Percent-decodes a path segment (the `percent` check has refused bad escapes already;
/// anything left undecodable is kept as it is).
fn decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_come_from_the_bearer_header_or_a_websocket_subprotocol() {
        let mut headers = HeaderMap::new();
        assert_eq!(token(&headers), None);
        headers.insert(AUTHORIZATION, "Bearer hrd_abc".parse().unwrap());
        assert_eq!(token(&headers).as_deref(), Some("hrd_abc"));
        headers.insert(AUTHORIZATION, "Basic xyz".parse().unwrap());
        assert_eq!(token(&headers), None);
        let mut ws = HeaderMap::new();
        ws.insert(
            SEC_WEBSOCKET_PROTOCOL,
            "herald, bearer.hrd_x".parse().unwrap(),
        );
        assert_eq!(token(&ws).as_deref(), Some("hrd_x"));
    }

    #[test]
    fn routes_name_their_permission() {
        let op = |m: Method, p: &str| operation(&m, p);
        assert_eq!(
            op(Method::GET, "/archive/logs").unwrap().0,
            Operation::Query
        );
        assert_eq!(op(Method::GET, "/monitor").unwrap().0, Operation::Admin);
        assert_eq!(
            op(Method::PUT, "/info/A.b%20c"),
            Some((Operation::InfoWrite, "A.b c".to_string()))
        );
        assert_eq!(
            op(Method::GET, "/info/A.b"),
            Some((Operation::InfoRead, "A.b".to_string()))
        );
        assert_eq!(op(Method::GET, "/info"), None);
        assert_eq!(op(Method::GET, "/info-types"), None);
        assert_eq!(op(Method::GET, "/ws/info"), None);
    }
}
