//! A cluster of three real `herald serve` processes: the second and third join through the
//! first, and all three form a full mesh. Records published on any member reach the
//! subscribers of every member exactly once, and a member sends over a route only what the
//! far side's subscribers want.

use std::collections::BTreeMap;
use std::time::Duration;

use herald_client::{Client, Subscription};
use herald_proto::{Filter, Kind, Record, Value};
use herald_testkit::ServeProcess;

mod cluster_kit;
use cluster_kit::{field, routes, FAST_HEARTBEAT, HERALD};

const PER_MEMBER: usize = 1_000;
const WAIT: Duration = Duration::from_secs(10);

fn member(name: &str, seed: Option<&ServeProcess>) -> ServeProcess {
    cluster_kit::member(name, seed, &[], &[])
}

fn member_with(name: &str, seed: Option<&ServeProcess>, env: &[(&str, &str)]) -> ServeProcess {
    cluster_kit::member(name, seed, &[], env)
}

fn int(value: &Value) -> i64 {
    match value {
        Value::Int(n) => *n,
        other => panic!("not an int: {other:?}"),
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
    collect_into(subscription, &mut seen, expected).await;
    seen
}

/// Reads, counting each text in `seen`, until the record with `text` came.
async fn collect_until(
    subscription: &mut Subscription,
    seen: &mut BTreeMap<String, usize>,
    text: &str,
) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !seen.contains_key(text) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "`{text}` did not come"
        );
        if let Ok(delivered) = subscription
            .next_record_timeout(Duration::from_millis(200))
            .await
        {
            *seen.entry(delivered.record().text.clone()).or_insert(0) += 1;
        }
    }
}

/// As [`collect`], counting into `seen` (which may hold records read before).
async fn collect_into(
    subscription: &mut Subscription,
    seen: &mut BTreeMap<String, usize>,
    expected: usize,
) {
    let mut total: usize = seen.values().sum();
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

    c.freeze();
    // a and b each drop their route to the hung member; the one between them stays.
    wait_for_routes(&both, 1, 0).await;
    a_client.publish(&numbered("a", 1)).await.unwrap();
    a_client.flush(WAIT).await.unwrap();
    let delivered = on_b.next_record_timeout(WAIT).await.unwrap();
    assert_eq!(delivered.record().text, "a 1");

    c.thaw();
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

    b.freeze();
    wait_for_routes(std::slice::from_ref(&a_client), 0, 0).await;
    // a holds b's link: what b's subscriber wants queues for it.
    for n in 0..100 {
        a_client.publish(&numbered("a", n)).await.unwrap();
    }
    a_client.flush(WAIT).await.unwrap();
    b.thaw();
    let seen = collect(&mut on_b, 100).await;
    assert_eq!(
        seen.len(),
        100,
        "records held for the route while it was down"
    );
    assert!(seen.values().all(|n| *n == 1), "none twice: {seen:?}");
}

#[tokio::test]
async fn a_member_killed_under_load_loses_no_acknowledged_record_and_delivers_none_twice() {
    // a syncs its archive every 200 ms only: a `stored` acknowledgement waits long enough
    // for the test to kill a between routing a batch and acknowledging it.
    let slow_sync = [
        FAST_HEARTBEAT[0],
        FAST_HEARTBEAT[1],
        ("HERALD_ARCHIVE_FSYNC", "interval"),
        ("HERALD_ARCHIVE_FSYNC_INTERVAL", "200ms"),
    ];
    let a = member_with("a", None, &slow_sync);
    let b = member_with("b", Some(&a), &FAST_HEARTBEAT);
    let c = member_with("c", Some(&a), &FAST_HEARTBEAT);
    let (b_client, c_client) = (
        Client::connect(&b.url()).await.unwrap(),
        Client::connect(&c.url()).await.unwrap(),
    );
    let mut on_b = b_client
        .subscribe(Filter::subject("T.*").unwrap())
        .await
        .unwrap();
    let mut on_c = c_client
        .subscribe(Filter::subject("T.*").unwrap())
        .await
        .unwrap();
    // A subscriber of the member that dies: it fails over to c.
    let a_addr = a.addr.clone();
    let watcher = Client::connect(&format!("herald://{},{}", a.addr, c.addr))
        .await
        .unwrap();
    let mut on_a = watcher
        .subscribe(Filter::subject("T.*").unwrap())
        .await
        .unwrap();
    wait_for_routes(&[b_client.clone(), c_client.clone()], 2, 1).await;
    let a_client = Client::connect(&a.url()).await.unwrap();
    wait_for_routes(&[a_client], 2, 1).await;

    // The producer uses a, and b once a is gone; the last record of every 500 waits for
    // `stored`. A quarter of the way in, a is killed as soon as b has a batch that a has
    // not acknowledged yet: the producer sends it again to b.
    let producer = Client::connect(&format!("herald://{},{}", a.addr, b.addr))
        .await
        .unwrap();
    const TOTAL: usize = 20_000;
    const BATCH: usize = 500;
    // Log records: the default archive keeps them.
    let record = |n: usize| Record {
        kind: Kind::Log,
        ..numbered("p", n)
    };
    let mut on_b_seen = BTreeMap::new();
    let mut a = Some(a);
    for first in (0..TOTAL).step_by(BATCH) {
        for n in first..first + BATCH - 1 {
            producer.publish(&record(n)).await.unwrap();
        }
        let acknowledging = tokio::spawn({
            let (producer, last) = (producer.clone(), record(first + BATCH - 1));
            async move {
                producer
                    .sync_send(&last, herald_proto::AckLevel::Stored, WAIT)
                    .await
            }
        });
        if first >= TOTAL / 4 && a.is_some() {
            let text = format!("p {first}");
            collect_until(&mut on_b, &mut on_b_seen, &text).await;
            if !acknowledging.is_finished() {
                a.take().unwrap().kill();
            }
        }
        acknowledging.await.unwrap().unwrap();
    }
    assert!(
        a.is_none(),
        "no batch was caught routed and not acknowledged"
    );
    assert_eq!(producer.failovers(), 1);
    // What a had passed on came again, and was dropped.
    let mut duplicates = 0;
    for client in [&b_client, &c_client] {
        let data = client.monitor().await.unwrap();
        duplicates += int(herald_client::monitor_value(&data, "duplicates").unwrap());
    }
    assert!(duplicates > 0, "no record was sent twice");

    let on_c_seen = collect(&mut on_c, TOTAL).await;
    collect_into(&mut on_b, &mut on_b_seen, TOTAL).await;
    for (seen, at) in [(&on_b_seen, "b"), (&on_c_seen, "c")] {
        let missing: Vec<usize> = (0..TOTAL)
            .filter(|n| !seen.contains_key(&format!("p {n}")))
            .collect();
        assert!(
            missing.is_empty(),
            "member {at} misses {} acknowledged records, the first {:?}",
            missing.len(),
            &missing[..missing.len().min(10)]
        );
        let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "member {at} delivered {} records twice, e.g. {:?}",
            twice.len(),
            &twice[..twice.len().min(10)]
        );
    }
    // The subscriber of a was made again on c and heard for how long it was not served.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no notice of the failover"
        );
        match tokio::time::timeout(Duration::from_millis(500), on_a.next()).await {
            Ok(Some(herald_client::Event::Interrupted(notice))) => {
                assert_eq!(notice.lost, a_addr);
                assert_eq!(notice.resumed, c.addr);
                break;
            }
            Ok(Some(_)) | Err(_) => {}
            Ok(None) => panic!("the subscription ended"),
        }
    }
}

#[tokio::test]
async fn a_record_is_acknowledged_only_once_the_far_member_has_it() {
    let a = member_with("a", None, &FAST_HEARTBEAT);
    let b = member_with("b", Some(&a), &FAST_HEARTBEAT);
    let c = member_with("c", Some(&a), &FAST_HEARTBEAT);
    let b_client = Client::connect(&b.url()).await.unwrap();
    let mut on_b = b_client
        .subscribe(Filter::subject("T.*").unwrap())
        .await
        .unwrap();
    let a_client = Client::connect(&a.url()).await.unwrap();
    let c_client = Client::connect(&c.url()).await.unwrap();
    wait_for_routes(&[a_client.clone(), c_client.clone()], 2, 0).await;
    wait_for_routes(std::slice::from_ref(&a_client), 2, 0).await;
    let producer = Client::connect(&format!("herald://{},{}", a.addr, c.addr))
        .await
        .unwrap();

    // b hangs (briefly: its routes stay up): a queues b's records and cannot hear b confirm
    // them, so it must not acknowledge them to the producer, whose flush waits.
    b.freeze();
    const COUNT: usize = 1_000;
    for n in 0..COUNT {
        producer.publish(&numbered("p", n)).await.unwrap();
    }
    let flushing = tokio::spawn({
        let producer = producer.clone();
        async move { producer.flush(WAIT).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !flushing.is_finished(),
        "acknowledged before the far member had the records"
    );
    // a dies holding them; the producer sends them again to c, which routes them to b.
    let mut a = a;
    a.kill();
    b.thaw();
    flushing.await.unwrap().unwrap();
    assert_eq!(producer.failovers(), 1);
    let seen = collect(&mut on_b, COUNT).await;
    assert_eq!(seen.len(), COUNT, "b misses acknowledged records");
    assert!(seen.values().all(|n| *n == 1), "none twice: {seen:?}");
}

#[tokio::test]
async fn a_member_back_after_the_hold_time_hears_what_its_subscribers_lost() {
    // a holds b's link for 1 s and queues 8 records for it.
    let a_env = [
        FAST_HEARTBEAT[0],
        FAST_HEARTBEAT[1],
        ("HERALD_CLUSTER_HOLD", "1s"),
        ("HERALD_QUEUE_RECORDS", "8"),
    ];
    let a = member_with("a", None, &a_env);
    let b = member_with("b", Some(&a), &FAST_HEARTBEAT);
    let a_client = Client::connect(&a.url()).await.unwrap();
    // A patient subscriber: it keeps its connection while b hangs.
    let patient = herald_client::ClientOptions {
        heartbeat_interval: Duration::from_secs(10),
        heartbeat_timeout: Duration::from_secs(30),
        ..herald_client::ClientOptions::default()
    };
    let b_client = Client::connect_with(&b.url(), patient).await.unwrap();
    let mut on_b = b_client
        .subscribe(Filter::subject("T.*").unwrap())
        .await
        .unwrap();
    wait_for_routes(std::slice::from_ref(&a_client), 1, 1).await;
    b.freeze();
    wait_for_routes(std::slice::from_ref(&a_client), 0, 0).await;
    for n in 0..20 {
        a_client.publish(&numbered("a", n)).await.unwrap();
    }
    a_client.flush(WAIT).await.unwrap();
    // Past the hold time, a drops the link and what it held.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    b.thaw();
    let deadline = tokio::time::Instant::now() + WAIT;
    let (mut lost, mut records) = (0, 0);
    while lost + records < 20 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "lost {lost}, got {records}"
        );
        match tokio::time::timeout(Duration::from_millis(500), on_b.next()).await {
            Ok(Some(herald_client::Event::Gap(gap))) => {
                assert_eq!(gap.member.as_deref(), Some("a"), "{gap:?}");
                lost += gap.count;
            }
            Ok(Some(herald_client::Event::Record(_))) => records += 1,
            Ok(Some(other)) => panic!("unexpected {other:?}"),
            _ => {}
        }
    }
    assert_eq!((lost, records), (20, 0), "all 20 reported lost, naming a");
}

/// A route from another cluster, or from a member with this member's server name, is refused
/// with an `ERROR handshake` that says which, and closed.
#[tokio::test]
async fn a_route_from_another_cluster_or_a_member_of_the_same_name_is_refused() {
    use herald_proto::route::{Member, Members};
    use herald_proto::{ErrorCode, Frame};
    use herald_testkit::RawConnection;

    let a = member("a", None);
    let route: std::net::SocketAddr = a.route_addr.as_deref().unwrap().parse().unwrap();
    let stranger = |cluster: &str, name: &str| {
        Frame::Members(Members {
            cluster: cluster.to_string(),
            me: Member {
                id: 0x5eed_0001,
                name: name.to_string(),
                address: "127.0.0.1:9".to_string(),
            },
            known: Vec::new(),
            nonce: None,
        })
    };
    for (frame, expected) in [
        (
            stranger("other", "b"),
            "route refused: this member is of cluster `test`, the other of `other`",
        ),
        (
            stranger("test", "a"),
            "route refused: the member at 127.0.0.1:9 is named `a` too; give each member its \
             own `name`",
        ),
    ] {
        let mut connection = RawConnection::connect(route).await;
        connection.send(&frame).await;
        let errors = connection.errors_until_close().await;
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].code, ErrorCode::Handshake);
        assert_eq!(errors[0].message, expected);
    }
    // Nor a third name that a member routed to already has.
    let b = member("b", Some(&a));
    let client = Client::connect(&a.url()).await.unwrap();
    wait_for_routes(std::slice::from_ref(&client), 1, 0).await;
    let mut connection = RawConnection::connect(route).await;
    connection.send(&stranger("test", "b")).await;
    let errors = connection.errors_until_close().await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].message,
        format!(
            "route refused: the member at 127.0.0.1:9 is named `b`, as the member at {} is \
             already; give each member its own `name`",
            b.route_addr.as_deref().unwrap()
        )
    );
    // A member of the cluster with its own name is taken: after its MEMBERS (sent first,
    // before the other's is read) the route's frames follow, no ERROR.
    let mut connection = RawConnection::connect(route).await;
    connection.send(&stranger("test", "c")).await;
    match tokio::time::timeout(WAIT, connection.next_frame()).await {
        Ok(Some(Frame::Members(members))) => assert_eq!(members.me.name, "a"),
        other => panic!("expected MEMBERS, got {other:?}"),
    }
    match tokio::time::timeout(WAIT, connection.next_frame()).await {
        Ok(Some(frame)) => assert!(!matches!(frame, Frame::Error(_)), "{frame:?}"),
        other => panic!("expected the route's frames, got {other:?}"),
    }
}

/// The names of the members `client`'s server knows, as its monitor lists them, sorted.
async fn member_names(client: &Client) -> Vec<String> {
    let data = client.monitor().await.unwrap();
    let cluster = herald_client::monitor_value(&data, "cluster").expect("a cluster");
    let Value::Array(members) = field(cluster, "members") else {
        panic!("members: {cluster:?}");
    };
    let mut names: Vec<String> = members
        .iter()
        .map(|m| match field(m, "name") {
            Value::Str(name) => name.clone(),
            other => panic!("name: {other:?}"),
        })
        .collect();
    names.sort();
    names
}

/// A restarted member is a new member (a new id) of the same name: once its route is up the
/// others forget its old self — no longer listed, gossiped or dialed — so restarts do not
/// pile up members that are gone for good.
#[tokio::test]
async fn a_restarted_member_is_listed_once_and_its_old_selves_forgotten() {
    let a = member("a", None);
    let b = member("b", Some(&a));
    let mut c = member("c", Some(&a));
    let clients = [
        Client::connect(&a.url()).await.unwrap(),
        Client::connect(&b.url()).await.unwrap(),
    ];
    wait_for_routes(&clients, 2, 0).await;
    for _ in 0..2 {
        c.kill();
        c = member("c", Some(&a));
        let on_c = Client::connect(&c.url()).await.unwrap();
        let deadline = tokio::time::Instant::now() + WAIT;
        // The restarted member's own view too: its old self is none of the others.
        let views = [&clients[0], &clients[1], &on_c];
        for (client, expected) in views.into_iter().zip([["b", "c"], ["a", "c"], ["a", "b"]]) {
            loop {
                let up = routes(client)
                    .await
                    .iter()
                    .filter(|r| matches!(field(r, "up"), Value::Bool(true)))
                    .count();
                if up == 2 && member_names(client).await == expected {
                    break;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "members {:?}, {up} routes up",
                    member_names(client).await
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
