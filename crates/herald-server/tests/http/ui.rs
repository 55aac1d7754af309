//! `GET /monitor` as JSON, with browsers among the clients, and the embedded UI files.

use super::websocket::{browser_entry, open};
use super::*;

#[tokio::test]
async fn monitor_json_shows_the_browser_connection_until_it_closes() {
    let server = TestServer::start().await;
    let mut ws = open(
        &server,
        "/ws/records?subject=ANTENNA.*&priority=%3E%3DWARNING",
    )
    .await;
    let response = get(&server, "/monitor").await;
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let monitor = response.json();
    assert_eq!(monitor["server"], "herald");
    assert_eq!(monitor["connections"], 1);
    assert!(monitor["archive"]["backend"].is_string(), "{monitor}");
    assert!(monitor["drops"]["queue_full"].is_u64(), "{monitor}");
    let browser = browser_entry(&monitor);
    assert!(browser["name"]
        .as_str()
        .unwrap()
        .starts_with("browser 127.0.0.1:"));
    assert_eq!(browser["filtered"], 0);
    let subscription = &browser["subscriptions"][0];
    assert_eq!(
        subscription["filter"],
        "subject=ANTENNA.* priority=WARNING,ERROR,CRITICAL,ALERT,EMERGENCY policy=drop-new"
    );
    assert_eq!(subscription["depth"], 0);

    ws.close(None).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let monitor = get(&server, "/monitor").await.json();
        if monitor["connections"] == 0 {
            assert_eq!(monitor["clients"], json!([]));
            assert_eq!(monitor["closes"]["client_closed"], 1);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{monitor}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn the_ui_files_are_served_with_their_content_type() {
    let server = TestServer::start().await;
    let index = get(&server, "/").await;
    assert_eq!(index.status, 200);
    assert_eq!(
        index.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(index.header("cache-control"), Some("no-cache"));
    assert!(index.body.contains("Herald"), "{}", index.body);
    let same = get(&server, "/ui/index.html").await;
    assert_eq!(same.status, 200);
    assert_eq!(
        same.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(same.body, index.body);

    for missing in ["/ui/app.js", "/ui/README.md", "/ui/vendor/x.css"] {
        let response = get(&server, missing).await;
        let file = missing.trim_start_matches("/ui/");
        assert_error(&response, 404, "not_found", &format!("no UI file `{file}`"));
    }
    server.stop().await;
}
