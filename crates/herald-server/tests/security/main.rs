//! Identities and permissions over the native protocol: a token names an identity, each
//! operation is allowed or denied for it (`ERROR denied` for that request, the connection
//! and its subscriptions living on), subscriptions are narrowed to what the identity may
//! see, a revoked identity's connections are closed with a reason, and a server reachable
//! from the network refuses to start open unless told `insecure_open`. The same over HTTP
//! and WebSocket (`http`).

#[path = "../common/mod.rs"]
mod common;
mod http;
mod native;
mod tls;

use herald_proto::frame::{Hello, Subscribe, PROTOCOL_VERSION};
use herald_proto::info::{AttributeData, InfoRequest, TypeData, UpdateMode};
use herald_proto::{DeliveryOptions, ErrorCode, ErrorFrame, Filter, Frame, Value};
use herald_server::auth::store::{self, Entry};
use herald_server::config::SecurityConfig;
use herald_server::Config;
use herald_testkit::{temp_dir, RawConnection, TempDirGuard, TestServer};

pub fn globs(patterns: &[&str]) -> Vec<String> {
    patterns.iter().map(|p| p.to_string()).collect()
}

pub struct Secured {
    pub server: TestServer,
    pub identities: std::path::PathBuf,
    /// Tokens of `ops` (may do everything), `daq` (its own corner), `watcher` and `mute`
    /// (nothing).
    pub ops: String,
    pub daq: String,
    pub mute: String,
    /// Subscribes to everything, reads only `DAQ.*` objects.
    pub watcher: String,
    _dir: TempDirGuard,
}

/// The identity `daq`: its own corner of subjects and objects.
pub fn daq_entry() -> Entry {
    Entry {
        name: "daq".into(),
        publish: globs(&["DAQ.*"]),
        deny_publish: globs(&["DAQ.Secret"]),
        subscribe: globs(&["DAQ.*"]),
        info_read: globs(&["DAQ.*"]),
        info_write: globs(&["DAQ.Run*"]),
        ..Entry::default()
    }
}

pub async fn secured() -> Secured {
    let dir = temp_dir("identities");
    let identities = dir.join("identities.toml");
    let all = globs(&["*"]);
    let ops = store::add(
        &identities,
        Entry {
            name: "ops".into(),
            publish: all.clone(),
            subscribe: all.clone(),
            info_read: all.clone(),
            info_write: all.clone(),
            query: true,
            admin: true,
            ..Entry::default()
        },
    )
    .unwrap();
    let daq = store::add(&identities, daq_entry()).unwrap();
    let watcher = store::add(
        &identities,
        Entry {
            name: "watcher".into(),
            subscribe: globs(&["*"]),
            info_read: globs(&["DAQ.*"]),
            ..Entry::default()
        },
    )
    .unwrap();
    let mute = store::add(
        &identities,
        Entry {
            name: "mute".into(),
            ..Entry::default()
        },
    )
    .unwrap();
    let server = TestServer::start_with(Config {
        security: SecurityConfig {
            identities: Some(identities.clone()),
            insecure_open: false,
        },
        ..Config::default()
    })
    .await;
    Secured {
        server,
        identities,
        ops,
        daq,
        watcher,
        mute,
        _dir: TempDirGuard(dir),
    }
}

pub async fn hello(server: &TestServer, name: &str, token: &str) -> (RawConnection, Option<Frame>) {
    let mut raw = RawConnection::connect(server.addr()).await;
    raw.send(&Frame::Hello(Hello {
        version: PROTOCOL_VERSION,
        name: name.into(),
        token: token.into(),
        ..Hello::default()
    }))
    .await;
    let answer = raw.next_frame().await;
    (raw, answer)
}

pub async fn signed_in(server: &TestServer, name: &str, token: &str) -> RawConnection {
    let (raw, answer) = hello(server, name, token).await;
    assert!(matches!(answer, Some(Frame::Welcome(_))), "{answer:?}");
    raw
}

pub fn subscribe(cid: u64, subject: &str) -> Frame {
    Frame::Subscribe(Subscribe {
        cid,
        subscription: cid,
        filter: Filter::subject(subject).unwrap(),
        options: DeliveryOptions::default(),
    })
}

pub fn update(cid: u64, name: &str) -> Frame {
    Frame::Info {
        cid,
        request: InfoRequest::Update {
            mode: UpdateMode::Upsert,
            name: name.into(),
            type_name: Some("Run".into()),
            time: 1,
            attributes: vec![("n".into(), Value::Int(1))],
        },
    }
}

pub fn declare(cid: u64, name: &str) -> Frame {
    Frame::Info {
        cid,
        request: InfoRequest::Declare(TypeData {
            name: name.into(),
            attributes: vec![AttributeData {
                name: "n".into(),
                attr_type: "s64".into(),
                description: String::new(),
            }],
            ..TypeData::default()
        }),
    }
}

/// The `ERROR denied` answering `cid`, with its message.
pub async fn denied(raw: &mut RawConnection, cid: u64) -> String {
    match raw.next_frame().await {
        Some(Frame::Error(ErrorFrame {
            cid: got,
            code: ErrorCode::Denied,
            message,
        })) if got == cid => message,
        other => panic!("expected ERROR denied for cid {cid}, got {other:?}"),
    }
}

/// The connection still answers: a `PING` gets its `PONG`.
pub async fn lives(raw: &mut RawConnection) {
    raw.send(&Frame::Ping).await;
    loop {
        match raw.next_raw().await.unwrap() {
            Some(frame) if Frame::decode(frame.clone()).unwrap() == Frame::Pong => return,
            Some(_) => {}
            None => panic!("the connection closed"),
        }
    }
}
