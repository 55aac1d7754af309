//! A tiny HTTP/1.1 client over a tokio `TcpStream`: one request per connection
//! (`Connection: close`), the whole answer read, chunked bodies decoded. Enough to test the
//! server's HTTP front door without an HTTP client crate.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::WAIT;

/// An HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code, e.g. 200.
    pub status: u16,
    /// Header names (lower case) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
}

impl HttpResponse {
    /// Returns the value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(header, _)| *header == name)
            .map(|(_, value)| value.as_str())
    }

    /// Returns the body parsed as JSON.
    ///
    /// # Panics
    /// If the body is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("body is not JSON ({err}): {:?}", self.body))
    }
}

/// Sends `method target` to `addr`, with `body` as JSON if given, and reads the answer.
///
/// # Panics
/// If the server cannot be reached, does not answer within [`WAIT`], or answers with
/// something that is not HTTP/1.1.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    target: &str,
    body: Option<&str>,
) -> HttpResponse {
    request_as(addr, method, target, body, None).await
}

/// As [`request`], presenting `token` as `Authorization: Bearer` when given.
///
/// # Panics
/// As [`request`].
pub async fn request_as(
    addr: SocketAddr,
    method: &str,
    target: &str,
    body: Option<&str>,
    token: Option<&str>,
) -> HttpResponse {
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    let mut raw = head.into_bytes();
    raw.extend_from_slice(body.unwrap_or_default().as_bytes());
    send_raw(addr, &raw).await
}

/// Sends `raw` bytes as they are (a request head and body) and reads the answer, for
/// requests [`request`] cannot make.
///
/// # Panics
/// As [`request`].
pub async fn send_raw(addr: SocketAddr, raw: &[u8]) -> HttpResponse {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.expect("connect for HTTP");
        stream.write_all(raw).await.expect("write the request");
        let mut answer = Vec::new();
        stream
            .read_to_end(&mut answer)
            .await
            .expect("read the answer");
        answer
    };
    let answer = tokio::time::timeout(WAIT, exchange)
        .await
        .expect("the server answered in time");
    parse(&answer)
}

fn parse(answer: &[u8]) -> HttpResponse {
    let split = answer
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of head in {:?}", String::from_utf8_lossy(answer)));
    let head = std::str::from_utf8(&answer[..split]).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let mut body = answer[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    HttpResponse {
        status,
        headers,
        body: String::from_utf8(body).expect("a UTF-8 body"),
    }
}

fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = chunked
            .windows(2)
            .position(|window| window == b"\r\n")
            .expect("a chunk size line");
        let size_text = std::str::from_utf8(&chunked[..line_end]).expect("ASCII chunk size");
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).expect("hex chunk size");
        if size == 0 {
            return body;
        }
        let start = line_end + 2;
        body.extend_from_slice(&chunked[start..start + size]);
        chunked = &chunked[start + size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_chunked_answers() {
        let plain = parse(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\r\nnope");
        assert_eq!(plain.status, 404);
        assert_eq!(plain.header("content-type"), Some("text/plain"));
        assert_eq!(plain.body, "nope");
        let chunked =
            parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
        assert_eq!(chunked.body, "abcde");
    }
}
