//! A cluster of three real `herald serve` processes: the second and third join through the
//! first, and all three form a full mesh. Records published on any member reach the
//! subscribers of every member exactly once, and a member sends over a route only what the
//! far side's subscribers want.

use std::collections::BTreeMap;
use std::time::Duration;

use herald_client::{Client, Subscription};
use herald_proto::{Filter, Kind, Record, Value};
use herald_testkit::ServeProcess;

const HERALD: &str = env!("CARGO_BIN_EXE_herald");
const PER_MEMBER: usize = 1_000;
const WAIT: Duration = Duration::from_secs(10);

fn member(name: &str, seed: Option<&ServeProcess>) -> ServeProcess {
    member_with(name, seed, &[])
}

fn member_with(name: &str, seed: Option<&ServeProcess>, env: &[(&str, &str)]) -> ServeProcess {
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
    ServeProcess::start_with_env(HERALD, &args, env)
}

/// Heartbeats fast enough that a hung member is noticed within a second.
const FAST_HEARTBEAT: [(&str, &str); 2] = [
    ("HERALD_HEARTBEAT_INTERVAL", "200ms"),
    ("HERALD_HEARTBEAT_TIMEOUT", "1s"),
];

/// Sends `signal` (`-STOP`, `-CONT`) to `process`.
fn signal(process: &ServeProcess, signal: &str) {
    let pid = process.id().to_string();
    let status = std::process::Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

fn field<'a>(value: &'a Value, key: &str) -> &'a Value {
    match value {
        Value::Map(fields) => fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no `{key}` in {value:?}")),
        other => panic!("not a map: {other:?}"),
    }
}

fn int(value: &Value) -> i64 {
    match value {
        Value::Int(n) => *n,
        other => panic!("not an int: {other:?}"),
    }
}

/// The routes of `client`'s server, as the monitor shows them.
async fn routes(client: &Client) -> Vec<Value> {
    let data = client.monitor().await.unwrap();
    let cluster = herald_client::monitor_value(&data, "cluster")
        .expect("a cluster")
        .clone();
    match field(&cluster, "routes") {
        Value::Array(routes) => routes.clone(),
        other => panic!("routes: {other:?}"),
    }
}

/// Waits until every member has a route to both others carrying at least `interests`
/// interests of the far side.
async fn wait_for_mesh(clients: &[Client], interests: i64) {
    wait_for_routes(clients, 2, interests).await;
}

/// Waits until each of `clients`' servers has `count` routes up, each with at least
/// `interests` interests of the far side (links of routes that went down stay listed for a
/// while, as down).
async fn wait_for_routes(clients: &[Client], count: usize, interests: i64) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut ready = true;
        for client in clients {
            let routes: Vec<Value> = routes(client)
                .await
                .into_iter()
                .filter(|r| matches!(field(r, "up"), Value::Bool(true)))
                .collect();
            ready &= routes.len() == count
                && routes
                    .iter()
                    .all(|r| int(field(r, "interests")) >= interests);
        }
        if ready {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the routes did not come in time"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Two members, `b` joining through `a` (each with its own settings), a client of each, and
/// a subscription to `T.*` on `b`, once `a` has `b`'s interest.
struct Pair {
    a: ServeProcess,
    b: ServeProcess,
    a_client: Client,
    _b_client: Client,
    on_b: Subscription,
}

async fn pair(a_env: &[(&str, &str)], b_env: &[(&str, &str)]) -> Pair {
    let a = member_with("a", None, a_env);
    let b = member_with("b", Some(&a), b_env);
    let a_client = Client::connect(&a.url()).await.unwrap();
    let b_client = Client::connect(&b.url()).await.unwrap();
    let on_b = b_client
        .subscribe(Filter::subject("T.*").unwrap())
        .await
        .unwrap();
    wait_for_routes(std::slice::from_ref(&a_client), 1, 1).await;
    Pair {
        a,
        b,
        a_client,
        _b_client: b_client,
        on_b,
    }
}

fn numbered(from: &str, n: usize) -> Record {
    Record {
        text: format!("{from} {n}"),
        ..Record::new(Kind::Message, "T.numbers")
    }
}

/// Reads until `expected` records came (or the wait ends), then a little longer to catch
/// duplicates; returns how often each text came.
async fn collect(subscription: &mut Subscription, expected: usize) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    let mut total = 0;
    let deadline = tokio::time::Instant::now() + WAIT;
    while total < expected && tokio::time::Instant::now() < deadline {
        if let Ok(delivered) = subscription
            .next_record_timeout(Duration::from_millis(200))
            .await
        {
            *seen.entry(delivered.record().text.clone()).or_insert(0) += 1;
            total += 1;
        }
    }
    while let Ok(delivered) = subscription
        .next_record_timeout(Duration::from_millis(300))
        .await
    {
        *seen.entry(delivered.record().text.clone()).or_insert(0) += 1;
    }
    seen
}

#[tokio::test]
async fn records_reach_every_member_once_and_only_where_wanted() {
    let a = member("a", None);
    let b = member("b", Some(&a));
    let c = member("c", Some(&a));
    let mut clients = Vec::new();
    for server in [&a, &b, &c] {
        clients.push(Client::connect(&server.url()).await.unwrap());
    }
    let mut subscriptions = Vec::new();
    for client in &clients {
        subscriptions.push(
            client
                .subscribe(Filter::subject("T.*").unwrap())
                .await
                .unwrap(),
        );
    }
    wait_for_mesh(&clients, 1).await;

    // Nobody wants `U.*`: it must not cross any route.
    for n in 0..500 {
        let record = Record::new(Kind::Message, "U.unwanted");
        clients[0]
            .publish(&Record {
                text: format!("u {n}"),
                ..record
            })
            .await
            .unwrap();
    }
    for (client, from) in clients.iter().zip(["a", "b", "c"]) {
        for n in 0..PER_MEMBER {
            client.publish(&numbered(from, n)).await.unwrap();
        }
        client.flush(WAIT).await.unwrap();
    }
    for (subscription, at) in subscriptions.iter_mut().zip(["a", "b", "c"]) {
        let seen = collect(subscription, 3 * PER_MEMBER).await;
        assert_eq!(seen.len(), 3 * PER_MEMBER, "member {at} missed records");
        let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "member {at} got records more than once: {twice:?}"
        );
    }
    for route in routes(&clients[0]).await {
        let out = int(field(&route, "records_out"));
        assert_eq!(out, PER_MEMBER as i64, "a's route sent {out}: {route:?}");
    }
}

#[tokio::test]
async fn a_member_of_another_cluster_is_refused() {
    let a = member("a", None);
    let seed = format!("herald://{}", a.route_addr.as_deref().unwrap());
    let stranger = ServeProcess::start(
        HERALD,
        &[
            "--cluster",
            "other",
            "--cluster-listen",
            "127.0.0.1:0",
            "--route",
            &seed,
        ],
    );
    let a_client = Client::connect(&a.url()).await.unwrap();
    let stranger_client = Client::connect(&stranger.url()).await.unwrap();
    // The stranger dials at once; give it a few attempts.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(routes(&a_client).await.is_empty());
    assert!(routes(&stranger_client).await.is_empty());
}

#[tokio::test]
async fn a_hung_member_is_dropped_by_heartbeat_and_the_mesh_heals_when_it_wakes() {
    let a = member_with("a", None, &FAST_HEARTBEAT);
    let b = member_with("b", Some(&a), &FAST_HEARTBEAT);
    let c = member_with("c", Some(&a), &FAST_HEARTBEAT);
    let (a_client, b_client) = (
        Client::connect(&a.url()).await.unwrap(),
        Client::connect(&b.url()).await.unwrap(),
    );
    let mut on_b = b_client
        .subscribe(Filter::subject("T.*").unwrap())
        .await
        .unwrap();
    let both = [a_client.clone(), b_client.clone()];
    wait_for_routes(&both, 2, 0).await;

    signal(&c, "-STOP");
    // a and b each drop their route to the hung member; the one between them stays.
    wait_for_routes(&both, 1, 0).await;
    a_client.publish(&numbered("a", 1)).await.unwrap();
    a_client.flush(WAIT).await.unwrap();
    let delivered = on_b.next_record_timeout(WAIT).await.unwrap();
    assert_eq!(delivered.record().text, "a 1");

    signal(&c, "-CONT");
    wait_for_routes(&both, 2, 0).await;
    let c_client = Client::connect(&c.url()).await.unwrap();
    wait_for_routes(&[c_client], 2, 0).await;
}

#[tokio::test]
async fn a_loss_on_a_route_reaches_the_far_subscribers_as_a_gap_naming_the_member() {
    // a's queues, its route to b among them, hold 8 records: a burst overflows the route.
    // Bound whole: a field left to `..` would be dropped here, and its server with it.
    let Pair {
        a: _a,
        b: _b,
        a_client,
        _b_client,
        mut on_b,
    } = pair(&[("HERALD_QUEUE_RECORDS", "8")], &[]).await;
    const BURST: u64 = 20_000;
    for n in 0..BURST as usize {
        a_client.publish(&numbered("a", n)).await.unwrap();
    }
    a_client.flush(WAIT).await.unwrap();
    let (mut records, mut lost, mut named) = (0u64, 0u64, true);
    let deadline = tokio::time::Instant::now() + WAIT;
    while records + lost < BURST && tokio::time::Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_millis(500), on_b.next()).await {
            Ok(Some(herald_client::Event::Record(_))) => records += 1,
            Ok(Some(herald_client::Event::Gap(gap))) => {
                lost += gap.count;
                named &= gap.member.as_deref() == Some("a");
            }
            _ => {}
        }
    }
    assert!(lost > 0, "the route lost nothing: make the burst larger");
    assert!(named, "every gap names member a");
    assert_eq!(
        records + lost,
        BURST,
        "{records} records and {lost} reported lost"
    );
}

#[tokio::test]
async fn records_published_while_a_route_is_down_arrive_when_it_is_back() {
    let Pair {
        a: _a,
        b,
        a_client,
        _b_client,
        mut on_b,
    } = pair(&FAST_HEARTBEAT, &FAST_HEARTBEAT).await;

    signal(&b, "-STOP");
    wait_for_routes(std::slice::from_ref(&a_client), 0, 0).await;
    // a holds b's link: what b's subscriber wants queues for it.
    for n in 0..100 {
        a_client.publish(&numbered("a", n)).await.unwrap();
    }
    a_client.flush(WAIT).await.unwrap();
    signal(&b, "-CONT");
    let seen = collect(&mut on_b, 100).await;
    assert_eq!(
        seen.len(),
        100,
        "records held for the route while it was down"
    );
    assert!(seen.values().all(|n| *n == 1), "none twice: {seen:?}");
}
