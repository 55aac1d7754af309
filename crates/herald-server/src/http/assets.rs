//! The browser UI's files, embedded in the binary: `GET /` answers `ui/index.html`,
//! `GET /ui/{*path}` any file under `crates/herald-server/ui/`.
//!
//! `build.rs` walks `ui/` and writes the table [`UI_ASSETS`] (path relative to `ui/`,
//! bytes), so a file added there is served after the next build with no code change.
//! Answers carry `Cache-Control: no-cache`: a browser may keep a copy but asks again, so a
//! new server version never runs with an old script.

use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::HttpError;

include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));

/// Returns the embedded file at `path` (relative to `ui/`), if there is one.
pub fn asset(path: &str) -> Option<&'static [u8]> {
    UI_ASSETS
        .iter()
        .find(|(name, _)| *name == path)
        .map(|(_, bytes)| *bytes)
}

/// Returns the content type of a file by its extension.
pub fn content_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map_or("", |(_, extension)| extension);
    match extension.to_ascii_lowercase().as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn serve(path: &str) -> Result<Response, HttpError> {
    let Some(bytes) = asset(path) else {
        let message = format!("no UI file `{path}`");
        return Err(HttpError::new(StatusCode::NOT_FOUND, "not_found", message));
    };
    let headers = [
        (CONTENT_TYPE, content_type(path)),
        (CACHE_CONTROL, "no-cache"),
    ];
    Ok((headers, bytes).into_response())
}

/// `GET /`: `ui/index.html`.
pub async fn index() -> Result<Response, HttpError> {
    serve("index.html")
}

/// `GET /ui/{*path}`: the file, or a JSON 404.
pub async fn file(Path(path): Path<String>) -> Result<Response, HttpError> {
    serve(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_is_embedded_and_readmes_are_not() {
        assert!(asset("index.html").is_some());
        assert!(asset("README.md").is_none());
    }

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("vendor/x.min.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("app.js.map"), "application/json");
        assert_eq!(content_type("logo.SVG"), "image/svg+xml");
        assert_eq!(content_type("LICENSE"), "application/octet-stream");
    }
}
