//! Queue groups across a cluster of three real `herald serve` processes: a group with a
//! member on each server gets every record exactly once in the whole cluster, whichever
//! member it was published on, while an ordinary subscriber of the same subject gets all of
//! them; the work is shared by the members of every server.

use std::collections::BTreeMap;
use std::time::Duration;

use herald_client::{Client, Subscription};
use herald_proto::{DeliveryOptions, Filter, Kind, Record, Value};

mod cluster_kit;

const PER_MEMBER: usize = 1_000;
const WAIT: Duration = Duration::from_secs(10);

/// Waits until each server has two routes up, each with at least `interests` interests of
/// the far side.
async fn wait_for_mesh(clients: &[Client], interests: i64) {
    let deadline = tokio::time::Instant::now() + WAIT;
    'wait: loop {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the mesh did not form"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        for client in clients {
            let data = client.monitor().await.unwrap();
            let Some(Value::Map(cluster)) = herald_client::monitor_value(&data, "cluster") else {
                continue 'wait;
            };
            let Some(Value::Array(routes)) = herald_client::monitor_value(cluster, "routes") else {
                continue 'wait;
            };
            let up = routes.iter().filter(|route| {
                let Value::Map(route) = route else {
                    return false;
                };
                let up = herald_client::monitor_value(route, "up") == Some(&Value::Bool(true));
                let far = match herald_client::monitor_value(route, "interests") {
                    Some(Value::Int(n)) => *n,
                    _ => 0,
                };
                up && far >= interests
            });
            if up.count() != 2 {
                continue 'wait;
            }
        }
        return;
    }
}

/// Reads `subscription` until nothing more comes for a while, counting each text.
async fn drain(subscription: &mut Subscription, seen: &mut BTreeMap<String, usize>) -> usize {
    let mut count = 0;
    while let Ok(delivered) = subscription
        .next_record_timeout(Duration::from_millis(500))
        .await
    {
        *seen.entry(delivered.record().text.clone()).or_insert(0) += 1;
        count += 1;
    }
    count
}

#[tokio::test]
async fn a_group_spread_over_the_cluster_gets_each_record_once() {
    let a = cluster_kit::member("a", None, &[], &[]);
    let b = cluster_kit::member("b", Some(&a), &[], &[]);
    let c = cluster_kit::member("c", Some(&a), &[], &[]);
    let mut clients = Vec::new();
    for server in [&a, &b, &c] {
        clients.push(Client::connect(&server.url()).await.unwrap());
    }
    let workers = DeliveryOptions {
        group: Some("workers".into()),
        ..DeliveryOptions::default()
    };
    let mut members = Vec::new();
    for client in &clients {
        let filter = Filter::subject("T.*").unwrap();
        members.push(
            client
                .subscribe_with_options(filter, workers.clone())
                .await
                .unwrap(),
        );
    }
    let watcher = Client::connect(&b.url()).await.unwrap();
    let mut everything = watcher
        .subscribe(Filter::subject("T.*").unwrap())
        .await
        .unwrap();
    wait_for_mesh(&clients, 1).await;

    for (client, from) in clients.iter().zip(["a", "b", "c"]) {
        for n in 0..PER_MEMBER {
            let record = Record {
                text: format!("{from} {n}"),
                ..Record::new(Kind::Message, "T.jobs")
            };
            client.publish(&record).await.unwrap();
        }
        client.flush(WAIT).await.unwrap();
    }
    let total = 3 * PER_MEMBER;
    let mut seen = BTreeMap::new();
    let mut shares = Vec::new();
    for (member, at) in members.iter_mut().zip(["a", "b", "c"]) {
        let got = drain(member, &mut seen).await;
        assert!(got > 0, "the member on {at} got no work");
        shares.push(got);
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(twice.is_empty(), "records given to two members: {twice:?}");
    assert_eq!(
        seen.len(),
        total,
        "the group missed records (shares {shares:?})"
    );
    let mut all = BTreeMap::new();
    drain(&mut everything, &mut all).await;
    assert_eq!(all.len(), total, "the ordinary subscriber missed records");
    assert!(
        all.values().all(|n| *n == 1),
        "the ordinary subscriber got duplicates"
    );
}
