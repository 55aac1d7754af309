//! [`HttpError`]: every HTTP error is JSON `{"error": "<message>", "code": "<snake_case>"}`
//! with the status that fits, and the message names the problem and the value.

use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use herald_info::InfoError;
use serde_json::json;

/// An HTTP error response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// The status.
    pub status: StatusCode,
    /// What kind of problem, in snake case (`not_found`, `bad_attribute` …), for programs.
    pub code: &'static str,
    /// What is wrong, for people, quoting the offending value.
    pub message: String,
}

impl HttpError {
    /// Returns an error with `status`, `code` and `message`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        HttpError {
            status,
            code,
            message: message.into(),
        }
    }

    /// Returns a `400 Bad Request` error.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        HttpError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// Returns the error for what another cluster member answered a forwarded change with
    /// (or why it could not be forwarded): `unavailable` is 503; the owner's refusals keep
    /// the status they have on a single server (their messages are the store's).
    pub fn forwarded(code: herald_proto::ErrorCode, message: String) -> Self {
        let (status, name) = match code {
            herald_proto::ErrorCode::Unavailable => {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
            }
            _ if message.ends_with("does not exist") => (StatusCode::NOT_FOUND, "not_found"),
            _ if message.contains("already exists") => (StatusCode::CONFLICT, "exists"),
            _ if message.contains("type cannot change") => (StatusCode::CONFLICT, "type_change"),
            _ => (StatusCode::BAD_REQUEST, "bad_info"),
        };
        HttpError::new(status, name, message)
    }

    /// Returns the status and code an information-service error answers with.
    fn info_kind(error: &InfoError) -> (StatusCode, &'static str) {
        match error {
            InfoError::NotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
            InfoError::Exists { .. } => (StatusCode::CONFLICT, "exists"),
            InfoError::TypeChange { .. } => (StatusCode::CONFLICT, "type_change"),
            InfoError::UnknownType { .. } => (StatusCode::BAD_REQUEST, "unknown_type"),
            InfoError::MissingType { .. } => (StatusCode::BAD_REQUEST, "missing_type"),
            InfoError::MalformedName { .. } => (StatusCode::BAD_REQUEST, "bad_name"),
            InfoError::BadRegex { .. } => (StatusCode::BAD_REQUEST, "bad_regex"),
            InfoError::BadTypeSelection { .. } => (StatusCode::BAD_REQUEST, "bad_type_selection"),
            InfoError::BadAttribute { .. }
            | InfoError::MissingAttribute { .. }
            | InfoError::UnknownAttribute { .. }
            | InfoError::WrongType { .. }
            | InfoError::OutOfRange { .. } => (StatusCode::BAD_REQUEST, "bad_attribute"),
            InfoError::Io { .. } | InfoError::Corrupt { .. } => {
                (StatusCode::INTERNAL_SERVER_ERROR, "storage")
            }
            _ => (StatusCode::BAD_REQUEST, "bad_info"),
        }
    }
}

impl From<InfoError> for HttpError {
    fn from(error: InfoError) -> Self {
        let (status, code) = HttpError::info_kind(&error);
        HttpError::new(status, code, error.to_string())
    }
}

/// Returns the innermost cause's message: axum's rejections prefix their own sentence.
/// A whole `400 Bad Request` response with a plain-text `body`, for a peer that speaks
/// HTTP where the server cannot answer through axum (on the native port, in plain HTTP to
/// the HTTPS port).
pub fn plain_bad_request(body: &str) -> Vec<u8> {
    let head = format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    [head.into_bytes(), body.as_bytes().to_vec()].concat()
}

fn cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost = error;
    while let Some(source) = innermost.source() {
        innermost = source;
    }
    innermost.to_string()
}

impl From<QueryRejection> for HttpError {
    fn from(rejection: QueryRejection) -> Self {
        let message = format!("bad query string: {}", cause(&rejection));
        HttpError::new(rejection.status(), "bad_query", message)
    }
}

impl From<PathRejection> for HttpError {
    fn from(rejection: PathRejection) -> Self {
        let message = format!("bad path: {}", cause(&rejection));
        HttpError::new(rejection.status(), "bad_path", message)
    }
}

impl From<BytesRejection> for HttpError {
    fn from(rejection: BytesRejection) -> Self {
        let message = format!("cannot read the request body: {}", cause(&rejection));
        let code = match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
            _ => "bad_body",
        };
        HttpError::new(rejection.status(), code, message)
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(status = %self.status, code = self.code, error = %self.message, "http request failed");
        } else {
            tracing::debug!(status = %self.status, code = self.code, error = %self.message, "http request refused");
        }
        let body = json!({ "error": self.message, "code": self.code });
        (self.status, Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_errors_get_their_status() {
        let missing = HttpError::from(InfoError::NotFound { name: "A.b".into() });
        assert_eq!(
            missing,
            HttpError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                "object `A.b` does not exist"
            )
        );
        let exists = HttpError::from(InfoError::Exists { name: "A.b".into() });
        assert_eq!(
            (exists.status, exists.code),
            (StatusCode::CONFLICT, "exists")
        );
    }
}
