//! Refuses a request whose path or query holds a bad percent-encoding: a `%` not followed
//! by two hexadecimal digits. Left alone, such a `%` passes through as a literal character
//! and the request fails later for the wrong reason (`object A.B%ZZ does not exist`, 404);
//! a 400 that names it tells the user what to fix.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::HttpError;

/// Answers a request with a bad percent-encoding with `400 bad_path` (or `bad_query`)
/// naming it; passes every other request on.
pub async fn check(request: Request, next: Next) -> Response {
    let uri = request.uri();
    if let Some(error) = problem(uri.path(), "bad_path", "path") {
        return error.into_response();
    }
    if let Some(error) = uri.query().and_then(|q| problem(q, "bad_query", "query")) {
        return error.into_response();
    }
    next.run(request).await
}

fn problem(text: &str, code: &'static str, part: &str) -> Option<HttpError> {
    let at = bad_escape(text)?;
    let shown: String = text[at..].chars().take(3).collect();
    Some(HttpError::bad_request(
        code,
        format!(
            "bad percent-encoding `{shown}` at byte {at} of the {part} `{text}`: `%` must be \
             followed by two hexadecimal digits (write a literal `%` as `%25`)"
        ),
    ))
}

/// Returns the byte offset of the first `%` not followed by two hex digits.
fn bad_escape(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().find_map(|(at, byte)| {
        let hex = |i: usize| bytes.get(at + i).is_some_and(u8::is_ascii_hexdigit);
        (*byte == b'%' && !(hex(1) && hex(2))).then_some(at)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_escapes_that_are_not_two_hex_digits() {
        assert_eq!(bad_escape("/info/A.B%20C"), None);
        assert_eq!(bad_escape("/info/A.B%ZZ"), Some(9));
        assert_eq!(bad_escape("/info/A.B%2"), Some(9));
        assert_eq!(bad_escape("/info/A.B%"), Some(9));
        assert_eq!(bad_escape("from=-1h&text=100%25"), None);
        let error = problem("/info/A.B%ZZ", "bad_path", "path").unwrap();
        assert_eq!(
            error.message,
            "bad percent-encoding `%ZZ` at byte 9 of the path `/info/A.B%ZZ`: `%` must be \
             followed by two hexadecimal digits (write a literal `%` as `%25`)"
        );
    }
}
