//! What the cluster tests share: members of a cluster `test` as real `herald serve`
//! processes and fast heartbeats (`ServeProcess::freeze`/`thaw` hang and wake them).

#![allow(dead_code)] // each test file uses its own part

use std::time::Duration;

use herald_client::Client;
use herald_proto::Value;
use herald_testkit::ServeProcess;

pub const HERALD: &str = env!("CARGO_BIN_EXE_herald");

/// Heartbeats fast enough that a hung member is noticed within a second.
pub const FAST_HEARTBEAT: [(&str, &str); 2] = [
    ("HERALD_HEARTBEAT_INTERVAL", "200ms"),
    ("HERALD_HEARTBEAT_TIMEOUT", "1s"),
];

/// Starts member `name` of cluster `test` (its route listener on a free port), joining
/// through `seed`, with `extra` arguments and `env` settings.
pub fn member(
    name: &str,
    seed: Option<&ServeProcess>,
    extra: &[&str],
    env: &[(&str, &str)],
) -> ServeProcess {
    let mut args = vec![
        "--name",
        name,
        "--cluster",
        "test",
        "--cluster-listen",
        "127.0.0.1:0",
    ];
    let seed_url = seed.map(|s| format!("herald://{}", s.route_addr.as_deref().unwrap()));
    if let Some(url) = &seed_url {
        args.extend(["--route", url]);
    }
    args.extend(extra);
    ServeProcess::start_with_env(HERALD, &args, env)
}

/// The value of `key` in the monitor map `value`.
pub fn field<'a>(value: &'a Value, key: &str) -> &'a Value {
    match value {
        Value::Map(fields) => fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no `{key}` in {value:?}")),
        other => panic!("not a map: {other:?}"),
    }
}

/// The routes of `client`'s server, as the monitor shows them.
pub async fn routes(client: &Client) -> Vec<Value> {
    let data = client.monitor().await.unwrap();
    let cluster = herald_client::monitor_value(&data, "cluster")
        .expect("a cluster")
        .clone();
    match field(&cluster, "routes") {
        Value::Array(routes) => routes.clone(),
        other => panic!("routes: {other:?}"),
    }
}

/// The far members of the routes of `client`'s server that are up, sorted.
pub async fn routes_up(client: &Client) -> Vec<String> {
    let mut up: Vec<String> = routes(client)
        .await
        .iter()
        .filter(|r| matches!(field(r, "up"), Value::Bool(true)))
        .map(|r| match field(r, "member") {
            Value::Str(name) => name.clone(),
            other => panic!("member: {other:?}"),
        })
        .collect();
    up.sort();
    up
}

/// Waits (10 s at most) until `client`'s server has routes up to exactly `names`.
pub async fn wait_for_routes_to(client: &Client, names: &[&str]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while routes_up(client).await != names {
        assert!(
            tokio::time::Instant::now() < deadline,
            "routes up: {:?}, expected {names:?}",
            routes_up(client).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
