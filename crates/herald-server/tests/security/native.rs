//! The permission matrix over the native protocol.

use herald_proto::archive::{ArchiveRequest, SampleQuery};
use herald_proto::frame::Ack;
use herald_proto::info::{InfoRequest, SelectionData};
use herald_proto::{AckLevel, ErrorCode, Frame, Priority, Value};
use herald_server::auth::store::{self, Entry};
use herald_server::config::SecurityConfig;
use herald_server::{Config, Server};
use herald_testkit::{temp_dir, TempDirGuard};

use crate::common::{self, log, publish_frame, wait_until};
use crate::*;

#[tokio::test]
async fn no_token_or_a_wrong_one_is_refused_at_the_handshake() {
    let s = secured().await;
    for (token, says) in [("", "needs a token"), ("hrd_nope", "unknown token")] {
        let (mut raw, answer) = hello(&s.server, "stranger", token).await;
        match answer {
            Some(Frame::Error(error)) => {
                assert_eq!(error.code, ErrorCode::Unauthorized);
                assert!(error.message.contains(says), "{}", error.message);
            }
            other => panic!("expected ERROR unauthorized, got {other:?}"),
        }
        assert_eq!(raw.next_frame().await, None, "closed after the error");
    }
    let closes = s.server.monitor().snapshot();
    let closes = common::map(&closes, "closes");
    assert_eq!(common::int(closes, "unauthorized"), 2);
    s.server.stop().await;
}

#[tokio::test]
async fn publishing_outside_the_identity_is_denied_record_by_record() {
    let s = secured().await;
    let mut watcher = signed_in(&s.server, "ops-client", &s.ops).await;
    watcher.send(&subscribe(1, "*")).await;
    assert_eq!(watcher.next_frame().await, Some(Frame::Ok { cid: 1 }));

    let mut daq = signed_in(&s.server, "daq-client", &s.daq).await;
    let records = [
        log("DAQ.Readout", Priority::Info, "taken"),
        log("Magnet.Current", Priority::Info, "not daq's"),
        log("DAQ.Secret", Priority::Info, "denied by name"),
        log("_HERALD.threshold", Priority::Info, "admin only"),
    ];
    daq.send_bytes(&publish_frame(&records, 9, AckLevel::Received))
        .await;
    let message = denied(&mut daq, 9).await;
    assert!(
        message.contains("identity `daq` may not publish about `Magnet.Current`"),
        "{message}"
    );
    assert!(message.contains("3 records refused"), "{message}");
    assert_eq!(
        daq.next_frame().await,
        Some(Frame::Ack(Ack {
            ack_id: 9,
            level: AckLevel::Received,
            count: 1
        }))
    );
    lives(&mut daq).await;
    match watcher.next_frame().await {
        Some(Frame::Deliver(entries)) => {
            let subjects: Vec<&str> = entries.iter().map(|e| e.record.subject()).collect();
            assert_eq!(subjects, ["DAQ.Readout"]);
        }
        other => panic!("expected the one record, got {other:?}"),
    }
    let snapshot = s.server.monitor().snapshot();
    assert_eq!(common::int(&snapshot, "denied"), 1);
    assert_eq!(common::int(&snapshot, "refused_records"), 3);
    s.server.stop().await;
}

#[tokio::test]
async fn a_wide_subscription_is_narrowed_to_what_the_identity_may_see() {
    let s = secured().await;
    let mut daq = signed_in(&s.server, "daq-client", &s.daq).await;
    daq.send(&subscribe(1, "*")).await;
    assert_eq!(daq.next_frame().await, Some(Frame::Ok { cid: 1 }));
    let mut mute = signed_in(&s.server, "mute-client", &s.mute).await;
    mute.send(&subscribe(4, "*")).await;
    let message = denied(&mut mute, 4).await;
    assert!(message.contains("`mute` may not subscribe"), "{message}");
    lives(&mut mute).await;

    let mut ops = signed_in(&s.server, "ops-client", &s.ops).await;
    let records = [
        log("Magnet.Current", Priority::Info, "hidden"),
        log("DAQ.Readout", Priority::Info, "seen"),
        log("_HERALD.threshold", Priority::Info, "control: seen by all"),
    ];
    ops.send_bytes(&publish_frame(&records, 1, AckLevel::Received))
        .await;
    assert!(matches!(ops.next_frame().await, Some(Frame::Ack(_))));
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match daq.next_frame().await {
            Some(Frame::Deliver(entries)) => {
                seen.extend(entries.iter().map(|e| e.record.subject().to_string()));
            }
            other => panic!("expected deliveries, got {other:?}"),
        }
    }
    assert_eq!(seen, ["DAQ.Readout", "_HERALD.threshold"]);
    // Nothing hidden was counted as lost: it was never owed.
    assert_eq!(common::int(&s.server.monitor().snapshot(), "dropped"), 0);
    s.server.stop().await;
}

#[tokio::test]
async fn information_objects_are_read_and_written_by_name() {
    let s = secured().await;
    let mut ops = signed_in(&s.server, "ops-client", &s.ops).await;
    ops.send(&declare(1, "Run")).await;
    assert!(matches!(
        ops.next_frame().await,
        Some(Frame::InfoReply { cid: 1, .. })
    ));
    ops.send(&update(2, "Magnet.Run")).await;
    assert!(matches!(
        ops.next_frame().await,
        Some(Frame::InfoReply { cid: 2, .. })
    ));

    let mut daq = signed_in(&s.server, "daq-client", &s.daq).await;
    daq.send(&update(3, "DAQ.Run7")).await;
    assert!(matches!(
        daq.next_frame().await,
        Some(Frame::InfoReply { cid: 3, .. })
    ));
    daq.send(&update(4, "Magnet.Run")).await;
    let message = denied(&mut daq, 4).await;
    assert!(
        message.contains("`daq` may not write information object `Magnet.Run`"),
        "{message}"
    );
    daq.send(&Frame::Info {
        cid: 5,
        request: InfoRequest::Get(vec!["DAQ.Run7".into(), "Magnet.Run".into()]),
    })
    .await;
    let message = denied(&mut daq, 5).await;
    assert!(
        message.contains("may not read information object `Magnet.Run`"),
        "{message}"
    );
    daq.send(&Frame::Info {
        cid: 6,
        request: InfoRequest::List(SelectionData::default()),
    })
    .await;
    match daq.next_frame().await {
        Some(Frame::InfoReply { cid: 6, reply, .. }) => {
            let names: Vec<String> = reply
                .objects
                .into_iter()
                .flatten()
                .map(|o| o.name)
                .collect();
            assert_eq!(names, ["DAQ.Run7"]);
        }
        other => panic!("expected the list, got {other:?}"),
    }
    daq.send(&declare(7, "DaqType")).await;
    assert!(matches!(
        daq.next_frame().await,
        Some(Frame::InfoReply { cid: 7, .. })
    ));
    let mut mute = signed_in(&s.server, "mute-client", &s.mute).await;
    mute.send(&declare(8, "MuteType")).await;
    let message = denied(&mut mute, 8).await;
    assert!(
        message.contains("may not declare type `MuteType`"),
        "{message}"
    );
    lives(&mut daq).await;
    s.server.stop().await;
}

#[tokio::test]
async fn queries_and_the_monitor_need_their_permissions() {
    let s = secured().await;
    let query = |cid| Frame::Query {
        cid,
        request: ArchiveRequest::Samples(SampleQuery {
            name: "DAQ.Readout".into(),
            from: 0,
            to: 1,
            after: None,
            limit: 10,
        }),
    };
    let mut daq = signed_in(&s.server, "daq-client", &s.daq).await;
    daq.send(&query(1)).await;
    let message = denied(&mut daq, 1).await;
    assert!(
        message.contains("`daq` may not query the archive"),
        "{message}"
    );
    daq.send(&Frame::Monitor { cid: 2 }).await;
    let message = denied(&mut daq, 2).await;
    assert!(
        message.contains("needs the `admin` permission"),
        "{message}"
    );
    daq.send(&Frame::Reload { cid: 5 }).await;
    let message = denied(&mut daq, 5).await;
    assert!(
        message.contains("reload the server's configuration") && message.contains("`admin`"),
        "{message}"
    );
    lives(&mut daq).await;

    let mut ops = signed_in(&s.server, "ops-client", &s.ops).await;
    ops.send(&query(3)).await;
    assert!(matches!(
        ops.next_frame().await,
        Some(Frame::QueryReply { cid: 3, .. })
    ));
    ops.send(&Frame::Monitor { cid: 4 }).await;
    match ops.next_frame().await {
        Some(Frame::MonitorReply { cid: 4, data }) => {
            let entry = common::client_entry(&data, "daq-client");
            assert!(
                entry
                    .iter()
                    .any(|(k, v)| k == "identity" && *v == Value::from("daq")),
                "{entry:?}"
            );
        }
        other => panic!("expected the monitor, got {other:?}"),
    }
    // An admin passes the check (this test server has no file to read again).
    ops.send(&Frame::Reload { cid: 6 }).await;
    match ops.next_frame().await {
        Some(Frame::Error(error)) => {
            assert_eq!((error.cid, error.code), (6, ErrorCode::BadRequest));
            assert!(error.message.contains("no configuration file"), "{error:?}");
        }
        other => panic!("expected bad_request, got {other:?}"),
    }
    s.server.stop().await;
}

#[tokio::test]
async fn a_revoked_identity_is_closed_with_a_reason_and_its_token_refused() {
    let s = secured().await;
    let mut daq = signed_in(&s.server, "daq-client", &s.daq).await;
    daq.send(&subscribe(1, "DAQ.*")).await;
    assert_eq!(daq.next_frame().await, Some(Frame::Ok { cid: 1 }));
    let mut ops = signed_in(&s.server, "ops-client", &s.ops).await;
    store::revoke(&s.identities, "daq").unwrap();
    let errors = daq.errors_until_close().await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, ErrorCode::Unauthorized);
    assert!(
        errors[0].message.contains("identity `daq` was revoked"),
        "{}",
        errors[0].message
    );
    let (_, answer) = hello(&s.server, "again", &s.daq).await;
    assert!(
        matches!(&answer, Some(Frame::Error(e)) if e.code == ErrorCode::Unauthorized),
        "{answer:?}"
    );
    lives(&mut ops).await;
    let monitor = s.server.monitor();
    wait_until("the close is counted", || {
        common::int(common::map(&monitor.snapshot(), "closes"), "revoked") == 1
    })
    .await;
    s.server.stop().await;
}

#[tokio::test]
async fn a_server_reachable_from_the_network_refuses_to_start_open() {
    let any = "0.0.0.0:0".parse().unwrap();
    let data_dir = temp_dir("exposed");
    let _guard = TempDirGuard(data_dir.clone());
    let exposed = Config {
        listen: any,
        http: "127.0.0.1:0".parse().unwrap(),
        data_dir: data_dir.clone(),
        ..Config::default()
    };
    let err = Server::start(exposed.clone()).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    let message = err.to_string();
    assert!(
        message.contains("the native protocol on 0.0.0.0:0"),
        "{message}"
    );
    assert!(message.contains("herald token new"), "{message}");
    assert!(message.contains("--insecure-open"), "{message}");
    assert!(
        !data_dir.join("info").exists(),
        "a refused server touches nothing"
    );

    let open = Config {
        security: SecurityConfig {
            identities: None,
            insecure_open: true,
        },
        ..exposed.clone()
    };
    Server::start(open).await.unwrap().shutdown().await;

    add_identity(&data_dir, "ops");
    Server::start(exposed).await.unwrap().shutdown().await;
}

/// Adds identity `name`, with no permission, to `data_dir`'s identities file.
fn add_identity(data_dir: &std::path::Path, name: &str) {
    let entry = Entry {
        name: name.into(),
        ..Entry::default()
    };
    store::add(&herald_server::auth::store::default_path(data_dir), entry).unwrap();
}

#[tokio::test]
async fn cluster_routes_beyond_loopback_are_refused_though_the_server_has_identities() {
    // Without a cluster secret routes are not authenticated, and identities for the clients
    // do not guard them (with one, see herald-cli's cluster_security.rs).
    let data_dir = temp_dir("exposed-routes");
    let _guard = TempDirGuard(data_dir.clone());
    add_identity(&data_dir, "ops");
    let cluster = herald_server::config::ClusterConfig::new("plant", "0.0.0.0:0".parse().unwrap());
    let exposed = Config {
        data_dir: data_dir.clone(),
        cluster: Some(cluster),
        ..Config::default()
    };
    let err = Server::start(exposed.clone()).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    let message = err.to_string();
    assert!(message.contains("cluster routes on 0.0.0.0:0"), "{message}");
    assert!(message.contains("--insecure-open"), "{message}");
    let open = Config {
        security: SecurityConfig {
            identities: None,
            insecure_open: true,
        },
        ..exposed
    };
    Server::start(open).await.unwrap().shutdown().await;
}

#[tokio::test]
async fn object_changes_reach_an_ordinary_subscription_only_where_the_identity_may_read() {
    let s = secured().await;
    let mut watcher = signed_in(&s.server, "watcher-client", &s.watcher).await;
    watcher.send(&subscribe(1, "*")).await;
    assert_eq!(watcher.next_frame().await, Some(Frame::Ok { cid: 1 }));
    let mut ops = signed_in(&s.server, "ops-client", &s.ops).await;
    ops.send(&declare(1, "Run")).await;
    assert!(matches!(
        ops.next_frame().await,
        Some(Frame::InfoReply { .. })
    ));
    for (cid, name) in [(2, "Magnet.Run"), (3, "DAQ.Run7")] {
        ops.send(&update(cid, name)).await;
        assert!(matches!(
            ops.next_frame().await,
            Some(Frame::InfoReply { .. })
        ));
    }
    let records = [log(
        "Magnet.Current",
        Priority::Info,
        "a log record: may see",
    )];
    ops.send_bytes(&publish_frame(&records, 9, AckLevel::Received))
        .await;
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match watcher.next_frame().await {
            Some(Frame::Deliver(entries)) => {
                seen.extend(entries.iter().map(|e| e.record.subject().to_string()));
            }
            other => panic!("expected deliveries, got {other:?}"),
        }
    }
    assert_eq!(seen, ["DAQ.Run7", "Magnet.Current"]);
    s.server.stop().await;
}

#[tokio::test]
async fn a_token_replaced_under_the_same_name_closes_the_old_one() {
    let s = secured().await;
    let mut old = signed_in(&s.server, "old", &s.daq).await;
    store::revoke(&s.identities, "daq").unwrap();
    let new = store::add(&s.identities, daq_entry()).unwrap();
    let errors = old.errors_until_close().await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].code, ErrorCode::Unauthorized);
    let mut renewed = signed_in(&s.server, "renewed", &new).await;
    lives(&mut renewed).await;
    s.server.stop().await;
}

#[tokio::test]
async fn with_every_identity_revoked_the_server_admits_no_one() {
    let s = secured().await;
    for name in ["ops", "daq", "watcher", "mute"] {
        store::revoke(&s.identities, name).unwrap();
    }
    // Until the file is read again the answer is "needs a token"; never a WELCOME.
    let deadline = tokio::time::Instant::now() + common::WAIT;
    loop {
        let (_, answer) = hello(&s.server, "anyone", "").await;
        let Some(Frame::Error(error)) = answer else {
            panic!("the server must not become open, got {answer:?}");
        };
        assert_eq!(error.code, ErrorCode::Unauthorized);
        if error.message.contains("admits no one") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{}", error.message);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    s.server.stop().await;
}

#[tokio::test]
async fn an_identity_that_may_receive_nothing_still_hears_its_threshold() {
    let s = secured().await;
    let mut mute = signed_in(&s.server, "mute-logger", &s.mute).await;
    mute.send(&subscribe(1, "_HERALD.threshold")).await;
    assert_eq!(mute.next_frame().await, Some(Frame::Ok { cid: 1 }));
    let mut ops = signed_in(&s.server, "ops-admin", &s.ops).await;
    let records = [log("_HERALD.threshold", Priority::Info, "DEBUG for all")];
    ops.send_bytes(&publish_frame(&records, 1, AckLevel::Received))
        .await;
    match mute.next_frame().await {
        Some(Frame::Deliver(entries)) => {
            assert_eq!(entries[0].record.subject(), "_HERALD.threshold");
        }
        other => panic!("expected the threshold, got {other:?}"),
    }
    s.server.stop().await;
}
