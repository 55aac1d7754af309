//! A one-way mirror between real `herald serve` processes: the source connects out to the
//! mirror and streams the records of some subjects and the objects of some names; on the
//! mirror they are read-only; after the mirror comes back it has the objects' latest values
//! again and a gap notice for the records it missed.

use std::time::Duration;

use herald_client::{Client, ClientError, Event, InfoChange};
use herald_proto::info::{AttributeData, TypeData, UpdateMode};
use herald_proto::{AckLevel, ErrorCode, Filter, Kind, Record, Value};
use herald_testkit::{temp_dir, ServeProcess};

const HERALD: &str = env!("CARGO_BIN_EXE_herald");
const WAIT: Duration = Duration::from_secs(10);

/// A port free now, for a mirror that must come back on the same one.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn mirror(port: u16) -> ServeProcess {
    let listen = format!("127.0.0.1:{port}");
    ServeProcess::start(HERALD, &["--name", "public", "--listen", &listen])
}

fn record(subject: &str, n: usize) -> Record {
    Record {
        text: format!("{subject} {n}"),
        ..Record::new(Kind::Log, subject)
    }
}

async fn set(client: &Client, name: &str, value: i64) -> Result<u64, ClientError> {
    let fields = vec![("n".to_string(), Value::Int(value))];
    let object = client
        .set_info(name, Some("Counter"), fields, UpdateMode::Upsert)
        .await?;
    Ok(object.version)
}

async fn value(client: &Client, name: &str) -> Option<Value> {
    let object = client.get_info(name).await.unwrap()?;
    object
        .attributes
        .into_iter()
        .find(|(n, _)| n == "n")
        .map(|(_, v)| v)
}

/// Writes a source's configuration in `dir`: one `[[mirror]]` to 127.0.0.1:`port`, with
/// `lines` (TOML) after its `to`; returns the file's path.
fn source_config(dir: &std::path::Path, port: u16, lines: &str) -> std::path::PathBuf {
    let config = dir.join("source.toml");
    let text = format!("[[mirror]]\nto = \"herald://127.0.0.1:{port}\"\n{lines}\n");
    std::fs::write(&config, text).unwrap();
    config
}

/// Publishes five records of `ANTENNA.DV02` on the source and checks that the mirror's
/// subscription gets them, in order.
async fn five_records_flow(on_source: &Client, watching: &mut herald_client::Subscription) {
    for n in 0..5 {
        on_source.publish(&record("ANTENNA.DV02", n)).await.unwrap();
    }
    on_source.flush(WAIT).await.unwrap();
    for n in 0..5 {
        let delivered = watching.next_record_timeout(WAIT).await.unwrap();
        assert_eq!(delivered.record().text, format!("ANTENNA.DV02 {n}"));
    }
}

/// Waits until the source says it feeds the mirror.
async fn fed(source: &Client) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let data = source.monitor().await.unwrap();
        if let Some(Value::Array(mirrors)) = herald_client::monitor_value(&data, "mirrors") {
            if mirrors
                .iter()
                .any(|m| format!("{m:?}").contains("(\"up\", Bool(true))"))
            {
                return;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the source never fed the mirror"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_is_fed_read_only_and_catches_up_after_a_reconnect() {
    let port = free_port();
    let mut public = mirror(port);
    let dir = temp_dir("mirror-config");
    let config = source_config(
        &dir,
        port,
        "subjects = [\"ANTENNA.*\"]\nobjects = [\"ANTENNA.*\"]",
    );
    // The source's queues hold 8 records: what the mirror misses while down is shed.
    let source = ServeProcess::start_with_env(
        HERALD,
        &["--name", "control", "--config", config.to_str().unwrap()],
        &[("HERALD_QUEUE_RECORDS", "8")],
    );
    let on_source = Client::connect(&source.url()).await.unwrap();
    on_source
        .declare_type(counter_type("Counter"))
        .await
        .unwrap();
    set(&on_source, "ANTENNA.DV01", 1).await.unwrap();
    fed(&on_source).await;
    let on_public = Client::connect(&public.url()).await.unwrap();
    let mut watching = on_public
        .subscribe(Filter::subject("ANTENNA.*").unwrap())
        .await
        .unwrap();
    // The subscription is the mirror's own: records of the source flow to it.
    five_records_flow(&on_source, &mut watching).await;
    assert_eq!(value(&on_public, "ANTENNA.DV01").await, Some(Value::Int(1)));

    // Read-only on the mirror: records and objects of the mirrored names.
    let refused = on_public
        .sync_send(&record("ANTENNA.DV03", 0), AckLevel::Received, WAIT)
        .await
        .unwrap_err();
    assert_read_only(refused);
    assert_read_only(set(&on_public, "ANTENNA.DV01", 9).await.unwrap_err());
    // Other subjects are the mirror's own.
    on_public
        .sync_send(&record("LOCAL.thing", 0), AckLevel::Received, WAIT)
        .await
        .unwrap();

    // The mirror goes away; meanwhile the source changes the object and publishes 50
    // records, of which its queue for the mirror keeps 8.
    drop(watching);
    public.kill();
    tokio::time::sleep(Duration::from_millis(200)).await;
    set(&on_source, "ANTENNA.DV01", 2).await.unwrap();
    for n in 0..50 {
        on_source.publish(&record("ANTENNA.DV04", n)).await.unwrap();
    }
    on_source.flush(WAIT).await.unwrap();
    // A new mirror process (empty) on the same port: the source connects again. The source
    // is held still until the subscription is made, so what it sends at once is not missed.
    source.freeze();
    let public = mirror(port);
    let on_public = Client::connect(&public.url()).await.unwrap();
    let mut watching = on_public
        .subscribe(Filter::subject("ANTENNA.*").unwrap())
        .await
        .unwrap();
    source.thaw();
    let deadline = tokio::time::Instant::now() + WAIT;
    while value(&on_public, "ANTENNA.DV01").await != Some(Value::Int(2)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the latest value never came"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (mut records, mut lost) = (0u64, 0u64);
    while records + lost < 50 {
        match tokio::time::timeout(WAIT, watching.next()).await {
            Ok(Some(Event::Record(delivered))) => {
                if delivered.kind() == Kind::Log {
                    records += 1;
                } else {
                    assert!(InfoChange::from_delivered(&delivered).is_some());
                }
            }
            Ok(Some(Event::Gap(gap))) => {
                assert_eq!(gap.member.as_deref(), Some("control"), "{gap:?}");
                lost += gap.count;
            }
            other => panic!("expected the held records and a gap, got {other:?}"),
        }
    }
    assert!(lost > 0, "the source's queue shed nothing");
    assert_eq!(
        records + lost,
        50,
        "{records} records and {lost} reported lost"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Asserts that the mirror refused a change as read-only, naming its source.
fn assert_read_only(refused: ClientError) {
    match refused {
        ClientError::Server { code, message } => {
            assert_eq!(code, ErrorCode::ReadOnly);
            assert!(
                message.contains("read-only mirror of `control`"),
                "{message}"
            );
        }
        other => panic!("expected read_only, got {other:?}"),
    }
}

/// Makes identity `name` with `permissions` in `data_dir`'s identities file; returns its token.
fn token(data_dir: &std::path::Path, name: &str, permissions: &[&str]) -> String {
    let made = std::process::Command::new(HERALD)
        .args([
            "token",
            "new",
            name,
            "--data-dir",
            data_dir.to_str().unwrap(),
        ])
        .args(permissions)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    String::from_utf8(made.stdout).unwrap().trim().to_string()
}

fn counter_type(name: &str) -> TypeData {
    TypeData {
        name: name.into(),
        base: None,
        description: String::new(),
        attributes: vec![AttributeData {
            name: "n".into(),
            attr_type: "s64".into(),
            description: String::new(),
        }],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn types_declared_after_the_feed_began_reach_the_mirror_which_restarts_on_them() {
    // A mirror with identities, fed by an identity with `admin` alone (what feeding needs):
    // it declares the source's types there, though it may write no object itself.
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let public_dir = temp_dir("mirror-types");
    let feed = token(&public_dir, "feed", &["--admin"]);
    let reader = token(&public_dir, "reader", &["--info-read", "*"]);
    let mut public = ServeProcess::start_in(HERALD, &public_dir, &["--listen", &listen], &[]);
    let dir = temp_dir("mirror-types-config");
    let config = source_config(
        &dir,
        port,
        &format!("objects = [\"W.*\"]\ntoken = \"{feed}\""),
    );
    let source = ServeProcess::start(HERALD, &["--config", config.to_str().unwrap()]);
    let on_source = Client::connect(&source.url()).await.unwrap();
    on_source.declare_type(counter_type("Early")).await.unwrap();
    fed(&on_source).await;
    // Declared once the feed is up: sent as it is declared, before the object of it.
    on_source.declare_type(counter_type("Late")).await.unwrap();
    for (name, type_name) in [("W.a", "Early"), ("W.b", "Late")] {
        let fields = vec![("n".to_string(), Value::Int(1))];
        on_source
            .set_info(name, Some(type_name), fields, UpdateMode::Upsert)
            .await
            .unwrap();
    }
    let url = format!("herald://{listen}?token={reader}");
    let on_public = Client::connect(&url).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    while value(&on_public, "W.b").await.is_none() {
        assert!(tokio::time::Instant::now() < deadline, "W.b never came");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let types: Vec<String> = on_public
        .info_types()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(types, ["Early", "Late"]);
    drop(on_public);

    // The mirror's store reads back what it kept: it starts again, with both objects.
    public.terminate(WAIT);
    let public = ServeProcess::start_in(HERALD, &public_dir, &["--listen", &listen], &[]);
    let on_public = Client::connect(&format!("herald://{}?token={reader}", public.addr))
        .await
        .unwrap();
    assert_eq!(value(&on_public, "W.a").await, Some(Value::Int(1)));
    assert_eq!(value(&on_public, "W.b").await, Some(Value::Int(1)));
    drop(public);
    let _ = std::fs::remove_dir_all(&public_dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A mirror whose client port speaks TLS is fed over TLS (`to = "herald+tls://…"`, `ca`);
/// a source that trusts another CA, or dials it in plain TCP, never feeds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_on_tls_is_fed_over_tls_by_a_source_that_trusts_its_ca() {
    let dir = temp_dir("mirror-tls");
    let certs = dir.join("certs");
    herald_server::tls::dev::make(&certs, &[], &[]).unwrap();
    let other_ca = dir.join("other");
    herald_server::tls::dev::make(&other_ca, &[], &[]).unwrap();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let (cert, key) = (certs.join("server.pem"), certs.join("server-key.pem"));
    let _public = ServeProcess::start(
        HERALD,
        &[
            "--name",
            "public",
            "--listen",
            &listen,
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let source = |name: &str, to: &str, ca: &std::path::Path| {
        let config = dir.join(format!("{name}.toml"));
        let text = format!(
            "[[mirror]]\nto = \"{to}\"\n{}subjects = [\"ANTENNA.*\"]\n",
            if to.starts_with("herald+tls") {
                format!("ca = \"{}\"\n", ca.join("ca.pem").display())
            } else {
                String::new()
            }
        );
        std::fs::write(&config, text).unwrap();
        ServeProcess::start(
            HERALD,
            &["--name", name, "--config", config.to_str().unwrap()],
        )
    };
    let tls_to = format!("herald+tls://127.0.0.1:{port}");
    let control = source("control", &tls_to, &certs);
    let stranger = source("stranger", &tls_to, &other_ca);
    let plain = source("plain", &format!("herald://127.0.0.1:{port}"), &certs);
    let on_source = Client::connect(&control.url()).await.unwrap();
    fed(&on_source).await;
    let url = format!("{tls_to}?ca={}", certs.join("ca.pem").display());
    let on_public = Client::connect(&url).await.unwrap();
    let mut watching = on_public
        .subscribe(Filter::subject("ANTENNA.*").unwrap())
        .await
        .unwrap();
    five_records_flow(&on_source, &mut watching).await;
    let data = on_source.monitor().await.unwrap();
    let mirrors = format!("{:?}", herald_client::monitor_value(&data, "mirrors"));
    assert!(mirrors.contains("(\"tls\", Bool(true))"), "{mirrors}");
    // The other two have tried for a while (backoff from 100 ms) and never fed it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for process in [&stranger, &plain] {
        let client = Client::connect(&process.url()).await.unwrap();
        let data = client.monitor().await.unwrap();
        let mirrors = format!("{:?}", herald_client::monitor_value(&data, "mirrors"));
        assert!(mirrors.contains("(\"up\", Bool(false))"), "{mirrors}");
    }
    drop((control, stranger, plain));
    let _ = std::fs::remove_dir_all(&dir);
}
