//! This server dialing out over TLS — a source to its mirror, a member to another member's
//! route listener — with the clients' TLS (`herald_client::tls::Tls`): the same certificate
//! check and the same hints, worded with the settings of this server's configuration.

use herald_client::tls::Tls;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// The settings a hint names: where the CA is given, the client certificate and key, and
/// what reaches a side without TLS.
pub struct Settings<'a> {
    /// E.g. "the mirror's `ca`".
    pub ca: &'a str,
    /// E.g. "the mirror's `cert` and `key`".
    pub cert: &'a str,
    /// E.g. "a plain mirror is reached with herald://".
    pub plain: &'a str,
}

/// Completes a TLS handshake with `address` (`host:port`, whose certificate must name
/// `host`) over `stream`, within `timeout`.
///
/// # Errors
/// Why, with the clients' hint where the cause is usual, naming `settings`.
pub async fn connect(
    tls: &Tls,
    address: &str,
    stream: TcpStream,
    settings: &Settings<'_>,
    timeout: std::time::Duration,
) -> Result<TlsStream<TcpStream>, String> {
    let handshake = tokio::time::timeout(timeout, tls.connect(address, stream)).await;
    let Ok(handshake) = handshake else {
        return Err(format!(
            "no TLS handshake within {} ms",
            timeout.as_millis()
        ));
    };
    handshake.map_err(|err| {
        err.replace("?cert=FILE&key=FILE", settings.cert)
            .replace("?ca=FILE", settings.ca)
            .replace("?ca=", settings.ca)
            .replace("a plain server is reached with herald://", settings.plain)
    })
}
