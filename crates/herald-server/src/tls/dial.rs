//! This server dialing out over TLS — a source to its mirror, a member to another member's
//! route listener — with the clients' TLS (`herald_client::tls::Tls`): the same certificate
//! check and the same hints, worded with the settings of this server's configuration.

use herald_client::tls::Tls;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// The settings a hint names: where the CA is given, and the client certificate and key.
pub struct Settings<'a> {
    /// E.g. "the mirror's `ca`".
    pub ca: &'a str,
    /// E.g. "the mirror's `cert` and `key`".
    pub cert: &'a str,
}

/// Completes a TLS handshake with `address` (`host:port`, whose certificate must name
/// `host`) over `stream`.
///
/// # Errors
/// Why, with the clients' hint where the cause is usual, naming `settings`.
pub async fn connect(
    tls: &Tls,
    address: &str,
    stream: TcpStream,
    settings: &Settings<'_>,
) -> Result<TlsStream<TcpStream>, String> {
    tls.connect(address, stream).await.map_err(|err| {
        err.replace("?cert=FILE&key=FILE", settings.cert)
            .replace("?ca=FILE", settings.ca)
            .replace("?ca=", settings.ca)
    })
}
