//! The permission matrix over HTTP and WebSocket: `Authorization: Bearer` (or, for a
//! browser's WebSocket, the subprotocol `bearer.<token>`), 401 without a known token, 403
//! `denied` naming the identity, lists and live tails narrowed.

use futures_util::StreamExt;
use herald_testkit::http::{request_as, HttpResponse};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use crate::*;

async fn call(
    s: &Secured,
    method: &str,
    target: &str,
    body: Option<&str>,
    token: Option<&str>,
) -> HttpResponse {
    request_as(s.server.http_addr(), method, target, body, token).await
}

fn assert_denied(answer: &HttpResponse, says: &str) {
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(answer.json()["code"], "denied", "{}", answer.body);
    let message = answer.json()["error"].as_str().unwrap().to_string();
    assert!(message.contains(says), "{message}");
}

const RUN: &str = r#"{"type": "Run", "attributes": {"n": 1}}"#;

/// `ops` declares `Run` and makes `Magnet.Run` and `DAQ.Run7`.
async fn with_objects(s: &Secured) {
    let mut ops = signed_in(&s.server, "ops-setup", &s.ops).await;
    ops.send(&declare(1, "Run")).await;
    assert!(matches!(
        ops.next_frame().await,
        Some(Frame::InfoReply { cid: 1, .. })
    ));
    for (cid, name) in [(2, "Magnet.Run"), (3, "DAQ.Run7")] {
        ops.send(&update(cid, name)).await;
        assert!(matches!(
            ops.next_frame().await,
            Some(Frame::InfoReply { .. })
        ));
    }
}

#[tokio::test]
async fn a_missing_or_unknown_token_is_401_but_the_ui_files_are_served() {
    let s = secured().await;
    for token in [None, Some("hrd_nope")] {
        let answer = call(&s, "GET", "/info", None, token).await;
        assert_eq!(answer.status, 401, "{}", answer.body);
        assert_eq!(answer.json()["code"], "unauthorized");
        assert_eq!(
            answer.header("www-authenticate"),
            Some("Bearer realm=\"herald\"")
        );
    }
    assert_eq!(call(&s, "GET", "/", None, None).await.status, 200);
    assert_eq!(
        call(&s, "GET", "/info-types", None, Some(&s.mute))
            .await
            .status,
        200
    );
    s.server.stop().await;
}

#[tokio::test]
async fn each_route_is_allowed_or_denied_by_the_identity() {
    let s = secured().await;
    with_objects(&s).await;
    let daq = Some(s.daq.as_str());
    assert_eq!(
        call(&s, "GET", "/info/DAQ.Run7", None, daq).await.status,
        200
    );
    assert_denied(
        &call(&s, "GET", "/info/Magnet.Run", None, daq).await,
        "identity `daq` may not read information object `Magnet.Run`",
    );
    assert_eq!(
        call(&s, "PUT", "/info/DAQ.Run8", Some(RUN), daq)
            .await
            .status,
        200
    );
    assert_denied(
        &call(&s, "PUT", "/info/Magnet.Run", Some(RUN), daq).await,
        "may not write information object `Magnet.Run`",
    );
    assert_denied(
        &call(&s, "DELETE", "/info/Magnet%2ERun", None, daq).await,
        "may not write information object `Magnet.Run`",
    );
    let listed = call(&s, "GET", "/info", None, daq).await.json();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["DAQ.Run7", "DAQ.Run8"]);
    assert_denied(
        &call(&s, "GET", "/archive/logs?from=-1h", None, daq).await,
        "`daq` may not query the archive",
    );
    assert_denied(
        &call(&s, "GET", "/monitor", None, daq).await,
        "needs the `admin` permission",
    );

    let ops = Some(s.ops.as_str());
    assert_eq!(
        call(&s, "GET", "/info/Magnet.Run", None, ops).await.status,
        200
    );
    assert_eq!(
        call(&s, "GET", "/archive/logs?from=-1h", None, ops)
            .await
            .status,
        200
    );
    let monitor = call(&s, "GET", "/monitor", None, ops).await;
    assert_eq!(monitor.status, 200, "{}", monitor.body);
    assert!(
        monitor.json()["denied"].as_i64().unwrap() >= 5,
        "{}",
        monitor.body
    );
    s.server.stop().await;
}

async fn websocket(s: &Secured, target: &str, protocols: &str) -> Result<crate::http::Ws, u16> {
    let url = format!("ws://{}{target}", s.server.http_addr());
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", protocols.parse().unwrap());
    match tokio_tungstenite::connect_async(request).await {
        Ok((ws, response)) => {
            let chosen = response.headers().get("sec-websocket-protocol");
            assert_eq!(chosen.map(|v| v.to_str().unwrap()), Some("herald"));
            Ok(ws)
        }
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            Err(response.status().as_u16())
        }
        Err(other) => panic!("{other:?}"),
    }
}

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text message, as JSON, skipping pings.
async fn next_json(ws: &mut Ws) -> serde_json::Value {
    loop {
        let message = tokio::time::timeout(herald_testkit::WAIT, ws.next()).await;
        match message.expect("a message in time") {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(&text).unwrap(),
            Some(Ok(Message::Ping(_))) => {}
            other => panic!("expected a text message, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_browser_presents_its_token_as_a_subprotocol_and_sees_its_share() {
    let s = secured().await;
    assert_eq!(
        websocket(&s, "/ws/records", "herald").await.err(),
        Some(401)
    );
    let mute = format!("herald, bearer.{}", s.mute);
    assert_eq!(websocket(&s, "/ws/records", &mute).await.err(), Some(403));
    let daq = format!("herald, bearer.{}", s.daq);
    let mut tail = websocket(&s, "/ws/records?subject=*", &daq).await.unwrap();
    assert_eq!(next_json(&mut tail).await["type"], "hello");

    let mut ops = signed_in(&s.server, "ops-publisher", &s.ops).await;
    let records = [
        common::log("Magnet.Current", herald_proto::Priority::Info, "hidden"),
        common::log("DAQ.Readout", herald_proto::Priority::Info, "seen"),
    ];
    ops.send_bytes(&common::publish_frame(
        &records,
        1,
        herald_proto::AckLevel::Received,
    ))
    .await;
    let records = next_json(&mut tail).await;
    let subjects: Vec<&str> = records["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["DAQ.Readout"], "{records}");

    store::revoke(&s.identities, "daq").unwrap();
    let closed = loop {
        let message = tokio::time::timeout(herald_testkit::WAIT, tail.next()).await;
        match message.expect("the close in time") {
            Some(Ok(Message::Close(frame))) => break frame,
            Some(Ok(_)) => {}
            other => panic!("expected a close, got {other:?}"),
        }
    };
    let frame = closed.expect("a close frame with a reason");
    assert!(frame.reason.contains("revoked"), "{frame:?}");
    s.server.stop().await;
}
