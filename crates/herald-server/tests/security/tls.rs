//! TLS on both front doors, with certificates from `herald_server::tls::dev` (what `herald
//! cert dev` makes): the Rust client over `herald+tls://`, a plain client told to use TLS, a
//! client that does not trust the server's CA refused with a hint; mutual TLS, where a
//! client certificate's name acts as that identity; required client certificates; a
//! certificate replaced while clients are connected; HTTPS and a WebSocket over TLS.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use herald_client::{Client, ClientError, ConnectError};
use herald_proto::{Filter, Priority};
use herald_server::config::{ClientAuth, SecurityConfig, TlsConfig};
use herald_server::tls::dev::{self, files};
use herald_server::Config;
use herald_testkit::{temp_dir, TempDirGuard, TestServer, WAIT};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::*;

/// A directory of development certificates: a CA, the server's pair, and clients `ops`,
/// `daq` and `stranger` (who is no identity).
struct Certs {
    dir: PathBuf,
    _guard: TempDirGuard,
}

impl Certs {
    fn new(label: &str) -> Certs {
        let dir = temp_dir(label);
        let clients = ["ops", "daq", "stranger"].map(String::from);
        dev::make(&dir, &[], &clients).expect("development certificates");
        Certs {
            _guard: TempDirGuard(dir.clone()),
            dir,
        }
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    fn config(&self, client_auth: Option<ClientAuth>) -> TlsConfig {
        TlsConfig {
            cert: self.dir.join(files::SERVER),
            key: self.dir.join(files::SERVER_KEY),
            client_ca: client_auth.map(|_| self.dir.join(files::CA)),
            client_auth: client_auth.unwrap_or_default(),
        }
    }

    /// `herald+tls://localhost:PORT?ca=…`, with client `client`'s certificate if given.
    fn url(&self, server: &TestServer, client: Option<&str>) -> String {
        let mut url = format!(
            "herald+tls://localhost:{}?ca={}",
            server.addr().port(),
            self.path(files::CA)
        );
        if let Some(name) = client {
            url.push_str(&format!(
                "&cert={}&key={}",
                self.path(&files::client(name)),
                self.path(&files::client_key(name))
            ));
        }
        url
    }

    /// A rustls client configuration trusting this CA, presenting `client`'s certificate.
    fn client_config(&self, client: Option<&str>) -> Arc<rustls::ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(self.dir.join(files::CA)).unwrap() {
            roots.add(cert.unwrap()).unwrap();
        }
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots);
        let config = match client {
            None => builder.with_no_client_auth(),
            Some(name) => {
                let chain = CertificateDer::pem_file_iter(self.dir.join(files::client(name)))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                let key = PrivateKeyDer::from_pem_file(self.dir.join(files::client_key(name)));
                builder.with_client_auth_cert(chain, key.unwrap()).unwrap()
            }
        };
        Arc::new(config)
    }
}

async fn tls_server(certs: &Certs, client_auth: Option<ClientAuth>) -> TestServer {
    TestServer::start_with(Config {
        tls: Some(certs.config(client_auth)),
        ..Config::default()
    })
    .await
}

/// Checks that `client` can still publish and receive over its connection.
async fn round_trip(client: &Client, subject: &str) {
    let mut subscription = client
        .subscribe(Filter::subject(subject).unwrap())
        .await
        .unwrap();
    client
        .log(Priority::Info, subject, "over TLS")
        .await
        .unwrap();
    let delivered = subscription.next_record_timeout(WAIT).await.unwrap();
    assert_eq!(delivered.record().text, "over TLS");
}

#[tokio::test]
async fn the_rust_client_speaks_tls_and_a_plain_one_is_told_to() {
    let certs = Certs::new("tls-basic");
    let server = tls_server(&certs, None).await;
    let client = Client::connect(&certs.url(&server, None)).await.unwrap();
    round_trip(&client, "TLS.basic").await;

    let plain = Client::connect(&server.url()).await.unwrap_err();
    assert!(
        matches!(&plain, ConnectError::Refused { message, .. } if message.contains("herald+tls://")),
        "{plain}"
    );
    let untrusted = format!("herald+tls://localhost:{}", server.addr().port());
    let err = Client::connect(&untrusted).await.unwrap_err().to_string();
    assert!(
        err.contains("UnknownIssuer") && err.contains("?ca=FILE"),
        "{err}"
    );
    let counted = || {
        server
            .monitor()
            .closes(herald_server::events::CloseReason::TlsFailed)
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    while counted() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(counted(), 2, "the plain client and the untrusting one");
    server.stop().await;
}

#[tokio::test]
async fn a_client_certificate_acts_as_the_identity_it_names() {
    let certs = Certs::new("tls-mutual");
    let secured_dir = temp_dir("tls-mutual-identities");
    let _guard = TempDirGuard(secured_dir.clone());
    let identities = secured_dir.join("identities.toml");
    let all = globs(&["*"]);
    let ops_token = store::add(
        &identities,
        Entry {
            name: "ops".into(),
            publish: all.clone(),
            subscribe: all,
            admin: true,
            ..Entry::default()
        },
    )
    .unwrap();
    store::add(&identities, daq_entry()).unwrap();
    let server = TestServer::start_with(Config {
        tls: Some(certs.config(Some(ClientAuth::Optional))),
        security: SecurityConfig {
            identities: Some(identities),
            insecure_open: false,
        },
        ..Config::default()
    })
    .await;

    let named = format!("{}&name=daq-tls", certs.url(&server, Some("daq")));
    let daq = Client::connect(&named).await.unwrap();
    round_trip(&daq, "DAQ.run").await;
    let denied = daq.monitor().await.unwrap_err();
    assert!(
        matches!(&denied, ClientError::Server { message, .. } if message.contains("`daq`")),
        "{denied}"
    );
    let ops = Client::connect(&certs.url(&server, Some("ops")))
        .await
        .unwrap();
    let monitor = ops.monitor().await.unwrap();
    let entry = common::client_entry(&monitor, "daq-tls");
    let identity = entry.iter().find(|(k, _)| k == "identity").map(|(_, v)| v);
    assert_eq!(identity, Some(&Value::from("daq")), "{entry:?}");

    let refused = |err: ConnectError| match err {
        ConnectError::Refused { message, .. } => message,
        other => panic!("expected a refusal, got {other}"),
    };
    let stranger = Client::connect(&certs.url(&server, Some("stranger"))).await;
    let message = refused(stranger.unwrap_err());
    assert!(
        message.contains("names `stranger`, which is no identity"),
        "{message}"
    );
    let nobody = Client::connect(&certs.url(&server, None)).await;
    assert!(refused(nobody.unwrap_err()).contains("needs a token"));
    let both = format!("{}&token={ops_token}", certs.url(&server, Some("daq")));
    let message = refused(Client::connect(&both).await.unwrap_err());
    assert!(
        message.contains("belongs to `ops` but the client certificate names `daq`"),
        "{message}"
    );
    // Without a certificate, a token still works.
    let with_token = format!("{}&token={ops_token}", certs.url(&server, None));
    Client::connect(&with_token).await.unwrap();

    // The same certificate over HTTPS: `daq` may not read the monitor, `ops` may.
    let status = |config| https_get(&server, config, "/monitor");
    assert_eq!(status(certs.client_config(Some("daq"))).await.0, 403);
    assert_eq!(status(certs.client_config(Some("ops"))).await.0, 200);
    assert_eq!(status(certs.client_config(None)).await.0, 401);
    server.stop().await;
}

#[tokio::test]
async fn a_required_client_certificate_is_asked_for_by_name() {
    let certs = Certs::new("tls-required");
    let server = tls_server(&certs, Some(ClientAuth::Required)).await;
    let err = Client::connect(&certs.url(&server, None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("?cert=FILE&key=FILE"), "{err}");
    let client = Client::connect(&certs.url(&server, Some("stranger")))
        .await
        .unwrap();
    round_trip(&client, "TLS.required").await;
    server.stop().await;
}

#[tokio::test]
async fn a_new_certificate_is_taken_while_connected_clients_stay() {
    let old = Certs::new("tls-reload-old");
    let new = Certs::new("tls-reload-new");
    let live = temp_dir("tls-reload-live");
    let _live_guard = TempDirGuard(live.clone());
    copy_pair(&old.dir, &live);
    let server = TestServer::start_with(Config {
        tls: Some(TlsConfig {
            cert: live.join(files::SERVER),
            key: live.join(files::SERVER_KEY),
            client_ca: None,
            client_auth: ClientAuth::Optional,
        }),
        ..Config::default()
    })
    .await;
    let connected = Client::connect(&old.url(&server, None)).await.unwrap();
    let mut subscription = connected
        .subscribe(Filter::subject("TLS.reload").unwrap())
        .await
        .unwrap();

    // A half-written pair (new key, old certificate) is refused and the old one stays.
    std::fs::copy(
        new.dir.join(files::SERVER_KEY),
        live.join(files::SERVER_KEY),
    )
    .unwrap();
    tokio::time::sleep(herald_server::tls::FILES_POLL * 2).await;
    Client::connect(&old.url(&server, None)).await.unwrap();
    copy_pair(&new.dir, &live);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let newcomer = loop {
        match Client::connect(&new.url(&server, None)).await {
            Ok(client) => break client,
            Err(err) if tokio::time::Instant::now() < deadline => {
                let _ = err;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(err) => panic!("the new certificate was not taken: {err}"),
        }
    };
    let err = Client::connect(&old.url(&server, None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("UnknownIssuer"), "{err}");
    // The connection made under the old certificate lives on and receives.
    newcomer
        .log(Priority::Info, "TLS.reload", "after the reload")
        .await
        .unwrap();
    let delivered = subscription.next_record_timeout(WAIT).await.unwrap();
    assert_eq!(delivered.record().text, "after the reload");
    round_trip(&connected, "TLS.reload.again").await;
    server.stop().await;
}

#[tokio::test]
async fn https_and_a_websocket_over_tls_work_and_plain_http_is_told() {
    let certs = Certs::new("tls-http");
    let server = tls_server(&certs, None).await;
    let (status, body) = https_get(&server, certs.client_config(None), "/monitor").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"closes\""), "{body}");
    let plain = herald_testkit::http::send_raw(
        server.http_addr(),
        b"GET /monitor HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert_eq!(plain.status, 400);
    assert!(plain.body.contains("use https://"), "{}", plain.body);

    let stream = tls_connect(&server, certs.client_config(None)).await;
    let url = format!(
        "wss://localhost:{}/ws/records?subject=TLS.*",
        server.http_addr().port()
    );
    let (mut ws, _) = tokio_tungstenite::client_async(url, stream).await.unwrap();
    let client = Client::connect(&certs.url(&server, None)).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    // The subscription starts when the socket opens: publish until a record comes.
    loop {
        client
            .log(Priority::Info, "TLS.ws", "to the browser")
            .await
            .unwrap();
        let next = tokio::time::timeout(Duration::from_millis(200), ws.next()).await;
        if let Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text)))) = next {
            if text.contains("to the browser") {
                break;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no record over the WebSocket"
        );
    }
    server.stop().await;
}

fn copy_pair(from: &Path, to: &Path) {
    // The key first: for a moment the pair mismatches, and the server keeps the old one.
    for file in [files::SERVER_KEY, files::SERVER] {
        let temporary = to.join(format!("{file}.new"));
        std::fs::copy(from.join(file), &temporary).unwrap();
        std::fs::rename(&temporary, to.join(file)).unwrap();
    }
}

async fn tls_connect(
    server: &TestServer,
    config: Arc<rustls::ClientConfig>,
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let tcp = TcpStream::connect(server.http_addr()).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .unwrap()
}

/// `GET path` over HTTPS: the status and the body.
async fn https_get(
    server: &TestServer,
    config: Arc<rustls::ClientConfig>,
    path: &str,
) -> (u16, String) {
    let mut stream = tls_connect(server, config).await;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer).to_string();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}
