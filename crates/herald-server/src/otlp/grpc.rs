//! OTLP/gRPC: `opentelemetry.proto.collector.logs.v1.LogsService/Export` on the port
//! `otlp_grpc` names, in HTTP/2 (prior knowledge, or ALPN `h2` when the server has TLS).
//!
//! gRPC is written here by hand over hyper, which axum already brings, rather than with a
//! gRPC framework: one unary method needs the 5-byte message prefix, `content-type:
//! application/grpc` and a `grpc-status` trailer. A request carries one message, not
//! compressed (an exporter's `compression` must be none). Answers:
//!
//! | status | when |
//! |---|---|
//! | 0 `OK` | the records were taken; those that could not be are in `partial_success` |
//! | 3 `INVALID_ARGUMENT` | the message is cut short, or is not an `ExportLogsServiceRequest` |
//! | 8 `RESOURCE_EXHAUSTED` | the message is larger than `max_frame_bytes` |
//! | 12 `UNIMPLEMENTED` | another method, or a compressed message |
//! | 16 `UNAUTHENTICATED` | a server with identities, and no valid `authorization: Bearer` token or client certificate |
//!
//! A request that is not gRPC at all (another content type) gets HTTP 415, as the gRPC
//! specification asks.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use hyper::body::Frame;
use prost::Message;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::proto;
use crate::http::listener::ClientCertificate;
use crate::http::serve::{self, Protocol};
use crate::shared::Shared;
use crate::shutdown::Shutdown;

/// The one method served.
pub const EXPORT_PATH: &str = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";

/// The gRPC status codes this port answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// Taken.
    Ok = 0,
    /// Not a well-formed request.
    InvalidArgument = 3,
    /// Larger than the server takes.
    ResourceExhausted = 8,
    /// Not served here.
    Unimplemented = 12,
    /// No valid identity.
    Unauthenticated = 16,
}

/// Serves the gRPC port until shutdown, as the HTTP port is served.
pub async fn run(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: Shutdown,
    cut: watch::Receiver<bool>,
) {
    let app = Router::new()
        .route(EXPORT_PATH, post(export))
        .fallback(unimplemented)
        .with_state(Arc::clone(&shared));
    serve::run(listener, app, Protocol::Http2, shared, shutdown, cut).await;
}

/// `LogsService/Export`.
async fn export(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let headers = request.headers();
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    // gRPC itself (`application/grpc`, `+proto`), not gRPC-Web, whose trailers travel in
    // the body.
    let grpc = content_type == "application/grpc" || content_type.starts_with("application/grpc+");
    if !grpc {
        let message = format!("content-type `{content_type}`: this port speaks gRPC only");
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, message).into_response();
    }
    let token = crate::http::caller::token(headers).unwrap_or_default();
    let certificate = request.extensions().get::<ClientCertificate>();
    let access = match shared
        .guard
        .authenticate(&token, certificate.map(|c| c.0.as_str()))
    {
        Ok(access) => access,
        Err(message) => return failure(Status::Unauthenticated, &message),
    };
    let limit = shared.config().max_frame_bytes as usize;
    let body = match axum::body::to_bytes(request.into_body(), limit + 5).await {
        Ok(body) => body,
        Err(_) => {
            let message = format!("the message is larger than {limit} bytes (max_frame_bytes)");
            return failure(Status::ResourceExhausted, &message);
        }
    };
    let message = match unframe(&body) {
        Ok(message) => message,
        Err((status, why)) => return failure(status, &why),
    };
    let request = match proto::ExportLogsServiceRequest::decode(message) {
        Ok(request) => request,
        Err(err) => {
            let why = format!("not an OTLP ExportLogsServiceRequest: {err}");
            return failure(Status::InvalidArgument, &why);
        }
    };
    shared.otlp.grpc_requests.fetch_add(1, Ordering::Relaxed);
    let partial_success = super::export(&shared, &access, &request).await;
    let answer = proto::ExportLogsServiceResponse { partial_success }.encode_to_vec();
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from(Status::Ok as u16));
    let body = Body::new(Unary {
        message: Some(frame(&answer)),
        trailers: Some(trailers),
    });
    grpc_response(body)
}

/// Any other path.
async fn unimplemented(request: Request) -> Response {
    let why = format!(
        "{} is not served here: this port serves {EXPORT_PATH} only",
        request.uri().path()
    );
    failure(Status::Unimplemented, &why)
}

/// The one message of a request body: its 5-byte prefix read and checked.
fn unframe(body: &[u8]) -> Result<&[u8], (Status, String)> {
    let Some((prefix, message)) = body.split_first_chunk::<5>() else {
        let why = format!(
            "the request holds {} bytes, fewer than a gRPC message prefix (5)",
            body.len()
        );
        return Err((Status::InvalidArgument, why));
    };
    let [compressed, length @ ..] = *prefix;
    if compressed != 0 {
        let why = "compressed messages are not taken: export with compression none".to_string();
        return Err((Status::Unimplemented, why));
    }
    let length = u32::from_be_bytes(length) as usize;
    if length != message.len() {
        let why = format!(
            "the message prefix says {length} bytes, and {} follow (one message per request)",
            message.len()
        );
        return Err((Status::InvalidArgument, why));
    }
    Ok(message)
}

/// `message` with its 5-byte prefix (not compressed, big-endian length).
fn frame(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 5);
    out.push(0);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    Bytes::from(out)
}

/// A gRPC answer in headers only ("trailers-only"): the status and its message.
fn failure(status: Status, message: &str) -> Response {
    let mut response = grpc_response(Body::empty());
    let headers = response.headers_mut();
    headers.insert("grpc-status", HeaderValue::from(status as u16));
    if let Ok(value) = HeaderValue::from_str(&percent_encode(message)) {
        headers.insert("grpc-message", value);
    }
    response
}

fn grpc_response(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    headers.insert("grpc-accept-encoding", HeaderValue::from_static("identity"));
    response
}

/// `grpc-message` text: bytes outside printable ASCII, and `%`, as `%XX`.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b' '..=b'~' if byte != b'%' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// A unary answer's body: the one message, then the trailers.
struct Unary {
    message: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl hyper::body::Body for Unary {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(message) = self.message.take() {
            return Poll::Ready(Some(Ok(Frame::data(message))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.message.is_none() && self.trailers.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_unframed_and_bad_prefixes_named() {
        let framed = frame(b"abc");
        assert_eq!(&framed[..], b"\0\0\0\0\x03abc");
        assert_eq!(unframe(&framed), Ok(&b"abc"[..]));
        let (status, why) = unframe(b"\0\0\0").unwrap_err();
        assert_eq!(status, Status::InvalidArgument);
        assert!(why.contains("fewer than a gRPC message prefix"), "{why}");
        let (status, _) = unframe(b"\x01\0\0\0\x01x").unwrap_err();
        assert_eq!(status, Status::Unimplemented);
        let (_, why) = unframe(b"\0\0\0\0\x05abc").unwrap_err();
        assert!(why.contains("says 5 bytes, and 3 follow"), "{why}");
    }

    #[test]
    fn status_messages_are_percent_encoded() {
        assert_eq!(percent_encode("50% é\n"), "50%25 %C3%A9%0A");
    }
}
