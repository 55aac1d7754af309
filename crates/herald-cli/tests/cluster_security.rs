//! Guarded routes (docs/cluster.md, "Authenticated routes"). A cluster secret (`[cluster]
//! secret_file`): members that share it route to each other; a member with another secret,
//! or none, and a raw route that cannot prove it, are refused. The proofs are computed here
//! from docs/protocol.md's description (HMAC-SHA256), not with the server's code. TLS on
//! routes (`[cluster] tls`, `ca`): members that trust each other's CA route over TLS; one
//! that speaks plain TCP, or trusts another CA, is refused.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use herald_client::Client;
use herald_proto::route::{Member, Members};
use herald_proto::{ErrorCode, Filter, Frame, Kind, Record};
use herald_testkit::{temp_dir, RawConnection, ServeProcess, TempDirGuard};

mod cluster_kit;
use cluster_kit::{routes_up, wait_for_routes_to, HERALD};

const WAIT: Duration = Duration::from_secs(10);
const SECRET: &str = "c2VjcmV0IHNoYXJlZCBieSB0aGUgbWVtYmVycw==";

fn write_secret(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n")).unwrap();
    path.display().to_string()
}

fn member(name: &str, seed: Option<&ServeProcess>, secret: Option<&str>) -> ServeProcess {
    let extra: Vec<&str> = secret.map_or(Vec::new(), |s| vec!["--cluster-secret-file", s]);
    cluster_kit::member(name, seed, &extra, &[])
}

/// Whether routes are authenticated by a secret, and speak TLS, as the monitor says.
async fn guards(client: &Client) -> (bool, bool) {
    let data = client.monitor().await.unwrap();
    let cluster = herald_client::monitor_value(&data, "cluster").expect("a cluster");
    let flag = |name| {
        matches!(
            cluster_kit::field(cluster, name),
            herald_proto::Value::Bool(true)
        )
    };
    (flag("secret"), flag("tls"))
}

/// The MAC docs/protocol.md describes for `ROUTE_AUTH`.
fn proof(
    secret: &str,
    dialer: bool,
    cluster: &str,
    challenge: &[u8],
    own: &[u8],
    id: u64,
) -> Vec<u8> {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let mut message = b"herald route v1".to_vec();
    message.push(if dialer { b'd' } else { b'a' });
    for part in [cluster.as_bytes(), challenge, own] {
        message.extend_from_slice(&(part.len() as u64).to_be_bytes());
        message.extend_from_slice(part);
    }
    message.extend_from_slice(&id.to_be_bytes());
    ring::hmac::sign(&key, &message).as_ref().to_vec()
}

fn stranger(nonce: Option<Vec<u8>>) -> Frame {
    Frame::Members(Members {
        cluster: "test".to_string(),
        me: Member {
            id: 0x5eed_0002,
            name: "raw".to_string(),
            address: "127.0.0.1:9".to_string(),
        },
        known: Vec::new(),
        nonce,
    })
}

async fn next(connection: &mut RawConnection) -> Frame {
    match tokio::time::timeout(WAIT, connection.next_frame()).await {
        Ok(Some(frame)) => frame,
        other => panic!("expected a frame, got {other:?}"),
    }
}

#[tokio::test]
async fn members_that_share_the_secret_route_and_the_others_are_refused() {
    let dir = temp_dir("cluster-secret");
    let _guard = TempDirGuard(dir.clone());
    let shared = write_secret(&dir, "shared", SECRET);
    let other = write_secret(&dir, "other", "another secret, sixteen bytes or more");
    let a = member("a", None, Some(&shared));
    let b = member("b", Some(&a), Some(&shared));
    let c = member("c", Some(&a), Some(&other));
    let d = member("d", Some(&a), None);
    let on_a = Client::connect(&a.url()).await.unwrap();
    wait_for_routes_to(&on_a, &["b"]).await;
    assert_eq!(
        guards(&on_a).await,
        (true, false),
        "(secret, tls) in the monitor"
    );
    let outsiders = [
        Client::connect(&c.url()).await.unwrap(),
        Client::connect(&d.url()).await.unwrap(),
    ];
    only_b_routes_to_a(&on_a, &outsiders).await;
    // Records cross the authenticated route.
    records_cross(&Client::connect(&b.url()).await.unwrap(), &on_a).await;
    // Who is in the cluster goes only to a side that proved the secret: a's first MEMBERS
    // names a alone, though a knows b.
    let route: std::net::SocketAddr = a.route_addr.as_deref().unwrap().parse().unwrap();
    let mut connection = RawConnection::connect(route).await;
    connection.send(&stranger(Some(vec![0x42; 32]))).await;
    let Frame::Members(first) = next(&mut connection).await else {
        panic!("expected MEMBERS first");
    };
    assert_eq!(first.me.name, "a");
    assert!(first.known.is_empty(), "{first:?}");
}

/// Checks that well after the outsiders began to dial (with backoff: 100 ms, 200 ms, …) a
/// still routes to b alone, and the outsiders (clients of their servers) to no member.
async fn only_b_routes_to_a(on_a: &Client, outsiders: &[Client]) {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(routes_up(on_a).await, ["b"]);
    for outsider in outsiders {
        assert!(routes_up(outsider).await.is_empty());
    }
}

/// Publishes on `from` until a record reaches a subscriber on `to`.
async fn records_cross(from: &Client, to: &Client) {
    let mut subscription = to.subscribe(Filter::subject("T.*").unwrap()).await.unwrap();
    let on_b = from;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        on_b.publish(&Record::new(Kind::Log, "T.x")).await.unwrap();
        on_b.flush(WAIT).await.unwrap();
        match tokio::time::timeout(Duration::from_millis(200), subscription.next()).await {
            Ok(Some(herald_client::Event::Record(record))) => {
                assert_eq!(record.subject(), "T.x");
                break;
            }
            Ok(other) => panic!("unexpected {other:?}"),
            Err(_) => assert!(tokio::time::Instant::now() < deadline, "no record crossed"),
        }
    }
}

#[tokio::test]
async fn a_route_is_taken_only_with_the_proof_the_protocol_describes() {
    let dir = temp_dir("cluster-secret-raw");
    let _guard = TempDirGuard(dir.clone());
    let a = member("a", None, Some(&write_secret(&dir, "shared", SECRET)));
    let route: std::net::SocketAddr = a.route_addr.as_deref().unwrap().parse().unwrap();
    let ours = vec![0x42; 32];

    // The proof of the docs: the member's own proof checks out, and ours is taken.
    let mut connection = RawConnection::connect(route).await;
    connection.send(&stranger(Some(ours.clone()))).await;
    let Frame::Members(members) = next(&mut connection).await else {
        panic!("expected MEMBERS first");
    };
    let theirs = members
        .nonce
        .clone()
        .expect("a nonce from a member with a secret");
    assert_eq!(theirs.len(), 32);
    let Frame::RouteAuth(their_proof) = next(&mut connection).await else {
        panic!("expected ROUTE_AUTH second");
    };
    let expected = proof(SECRET, false, "test", &ours, &theirs, members.me.id);
    assert_eq!(their_proof, expected, "the acceptor's proof, as documented");
    let our_proof = proof(SECRET, true, "test", &theirs, &ours, 0x5eed_0002);
    connection.send(&Frame::RouteAuth(our_proof)).await;
    let frame = next(&mut connection).await;
    assert!(!matches!(frame, Frame::Error(_)), "taken: {frame:?}");
    drop(connection);

    // Refused: no nonce; a nonce of 16 bytes; a wrong secret; a proof made for another
    // nonce; the member's own proof sent back; another frame where the proof is due.
    // `answer` is given the member's nonce, ours and the member's id.
    type Answer = fn(&[u8], &[u8], u64) -> Frame;
    struct Refusal {
        nonce: Option<Vec<u8>>,
        answer: Option<Answer>,
        says: &'static str,
    }
    let refusals = [
        Refusal {
            nonce: None,
            answer: None,
            says: "has no cluster secret and this member needs one",
        },
        Refusal {
            nonce: Some(vec![0x42; 16]),
            answer: None,
            says: "sent a nonce of 16 bytes (32 expected)",
        },
        Refusal {
            nonce: Some(ours.clone()),
            answer: Some(|theirs, ours, _| {
                let wrong = "not the secret at all";
                Frame::RouteAuth(proof(wrong, true, "test", theirs, ours, 0x5eed_0002))
            }),
            says: "does not know this cluster's secret",
        },
        Refusal {
            nonce: Some(ours.clone()),
            answer: Some(|_, ours, _| {
                Frame::RouteAuth(proof(SECRET, true, "test", &[0x17; 32], ours, 0x5eed_0002))
            }),
            says: "does not know this cluster's secret",
        },
        Refusal {
            nonce: Some(ours.clone()),
            answer: Some(|theirs, ours, id| {
                Frame::RouteAuth(proof(SECRET, false, "test", ours, theirs, id))
            }),
            says: "does not know this cluster's secret",
        },
        Refusal {
            nonce: Some(ours.clone()),
            answer: Some(|_, _, _| Frame::Ping),
            says: "sent PING where its ROUTE_AUTH was due",
        },
    ];
    for Refusal {
        nonce,
        answer,
        says: expected,
    } in refusals
    {
        let mut connection = RawConnection::connect(route).await;
        connection.send(&stranger(nonce)).await;
        let Frame::Members(members) = next(&mut connection).await else {
            panic!("expected MEMBERS first");
        };
        if let Some(answer) = answer {
            assert!(matches!(next(&mut connection).await, Frame::RouteAuth(_)));
            let theirs = members.nonce.unwrap();
            connection
                .send(&answer(&theirs, &ours, members.me.id))
                .await;
        }
        let errors = connection.errors_until_close().await;
        assert_eq!(errors.len(), 1, "{expected}: {errors:?}");
        assert_eq!(errors[0].code, ErrorCode::Handshake);
        assert!(errors[0]
            .message
            .starts_with("route refused: the member at 127.0.0.1:"));
        assert!(
            errors[0].message.contains(expected),
            "{}",
            errors[0].message
        );
    }
}

#[test]
fn routes_beyond_loopback_need_the_secret_or_insecure_open() {
    let dir = temp_dir("cluster-secret-check");
    let _guard = TempDirGuard(dir.clone());
    let check = |extra: &[&str]| {
        let output = Command::new(HERALD)
            .args(["serve", "--check-config", "--data-dir"])
            .arg(dir.join("data"))
            .args(["--cluster", "site", "--cluster-listen", "0.0.0.0:7401"])
            .args(extra)
            .env_remove("HERALD_SERVER")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).to_string()
            + &String::from_utf8_lossy(&output.stderr);
        (output.status.success(), text)
    };
    let (ok, text) = check(&[]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("cluster routes on 0.0.0.0:7401 with no cluster secret"),
        "{text}"
    );
    let good = write_secret(&dir, "good", SECRET);
    let (ok, text) = check(&["--cluster-secret-file", &good]);
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!(
            "routes: members prove they know the cluster secret in {good}"
        )),
        "{text}"
    );
    let short = write_secret(&dir, "short", "too short");
    let (ok, text) = check(&["--cluster-secret-file", &short]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!("the cluster secret {short} holds 9 bytes")),
        "{text}"
    );
}

#[tokio::test]
async fn routes_speak_tls_with_members_that_trust_their_ca_and_refuse_the_others() {
    let dir = temp_dir("cluster-tls");
    let _guard = TempDirGuard(dir.clone());
    let (certs, other) = (dir.join("certs"), dir.join("other"));
    herald_server::tls::dev::make(&certs, &[], &[]).unwrap();
    herald_server::tls::dev::make(&other, &[], &[]).unwrap();
    let path = |p: std::path::PathBuf| p.display().to_string();
    let tls_member = |name: &str, seed: Option<&ServeProcess>, ca_dir: &Path| {
        let (cert, key) = (
            path(certs.join("server.pem")),
            path(certs.join("server-key.pem")),
        );
        let ca = path(ca_dir.join("ca.pem"));
        let extra = ["--tls-cert", cert.as_str(), "--tls-key", key.as_str()];
        let env = [
            ("HERALD_CLUSTER_TLS", "true"),
            ("HERALD_CLUSTER_CA", ca.as_str()),
        ];
        cluster_kit::member(name, seed, &extra, &env)
    };
    let client = |member: &ServeProcess| {
        let url = format!(
            "herald+tls://{}?ca={}",
            member.addr,
            path(certs.join("ca.pem"))
        );
        async move { Client::connect(&url).await.unwrap() }
    };
    let a = tls_member("a", None, &certs);
    let b = tls_member("b", Some(&a), &certs);
    // c speaks plain TCP to a's TLS route listener; d checks a's certificate against a CA
    // that did not sign it.
    let c = member("c", Some(&a), None);
    let d = tls_member("d", Some(&a), &other);
    let on_a = client(&a).await;
    wait_for_routes_to(&on_a, &["b"]).await;
    assert_eq!(
        guards(&on_a).await,
        (false, true),
        "(secret, tls) in the monitor"
    );
    let outsiders = [Client::connect(&c.url()).await.unwrap(), client(&d).await];
    only_b_routes_to_a(&on_a, &outsiders).await;
    records_cross(&client(&b).await, &on_a).await;

    // A plain route connection is told in an ERROR that the listener speaks TLS.
    let route: std::net::SocketAddr = a.route_addr.as_deref().unwrap().parse().unwrap();
    let mut connection = RawConnection::connect(route).await;
    connection.send(&stranger(None)).await;
    let errors = connection.errors_until_close().await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].message,
        "route refused: this route listener speaks TLS: set `[cluster] tls = true` on every member"
    );
}
