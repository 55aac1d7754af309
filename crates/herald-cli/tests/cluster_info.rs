//! Information objects in a cluster of real `herald serve` processes: the names split into
//! namespaces, each owned by one member. A change made on any member is applied by the
//! owner, every member keeps a copy (reads and info subscriptions are served from it), a
//! member that joins later gets a snapshot, and a namespace whose owner is gone cannot
//! change. With the archive on Apache Cassandra the owner holds a lease, and when it is
//! killed another member takes the namespace over and serves its latest values.

use std::time::Duration;

use herald_client::{Client, InfoChange, Subscription};
use herald_proto::info::{AttributeData, SelectionData, TypeData, UpdateMode};
use herald_proto::{ErrorCode, Value};
use herald_testkit::{temp_dir, ServeProcess};

mod cluster_kit;
use cluster_kit::FAST_HEARTBEAT;

const WAIT: Duration = Duration::from_secs(15);

/// Writes a configuration with one namespace, `antenna` (`ANTENNA.*`), owned by `owner`
/// (leased when `None`); returns its path.
fn config(dir: &std::path::Path, owner: Option<&str>, extra: &str) -> String {
    let owner = owner.map_or(String::new(), |o| format!("owner = \"{o}\"\n"));
    let text = format!(
        "{extra}\n[cluster]\nname = \"test\"\nlease = \"4s\"\n\n[[cluster.namespaces]]\n\
         name = \"antenna\"\nnames = [\"ANTENNA.*\"]\n{owner}"
    );
    let path = dir.join(format!("herald-{}.toml", rand_suffix()));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn member(
    name: &str,
    config: &str,
    seed: Option<&ServeProcess>,
    env: &[(&str, &str)],
) -> ServeProcess {
    cluster_kit::member(name, seed, &["--config", config], env)
}

fn mount_type() -> TypeData {
    TypeData {
        name: "Mount".into(),
        base: None,
        description: "an antenna mount".into(),
        attributes: vec![AttributeData {
            name: "azimuth".into(),
            attr_type: "double".into(),
            description: "degrees".into(),
        }],
    }
}

async fn set(client: &Client, name: &str, azimuth: f64) -> Result<u64, herald_client::ClientError> {
    let fields = vec![("azimuth".to_string(), Value::Float(azimuth))];
    client
        .set_info(name, Some("Mount"), fields, UpdateMode::Upsert)
        .await
        .map(|object| object.version)
}

async fn azimuth(client: &Client, name: &str) -> Option<f64> {
    let object = client.get_info(name).await.unwrap()?;
    match object.attributes.iter().find(|(n, _)| n == "azimuth") {
        Some((_, Value::Float(value))) => Some(*value),
        other => panic!("azimuth of {name}: {other:?}"),
    }
}

/// Waits until `check` holds, or fails with `what`.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The number of routes up on `client`'s server.
async fn routes_up(client: &Client) -> usize {
    let data = client.monitor().await.unwrap();
    let Some(Value::Map(cluster)) = herald_client::monitor_value(&data, "cluster") else {
        return 0;
    };
    let Some((_, Value::Array(routes))) = cluster.iter().find(|(k, _)| k == "routes") else {
        return 0;
    };
    routes
        .iter()
        .filter(|r| matches!(r, Value::Map(f) if f.iter().any(|(k, v)| k == "up" && *v == Value::Bool(true))))
        .count()
}

/// The owner of namespace `antenna` as `client`'s server sees it (`""`: none).
async fn owner(client: &Client) -> String {
    let data = client.monitor().await.unwrap();
    let Some(Value::Map(cluster)) = herald_client::monitor_value(&data, "cluster") else {
        return String::new();
    };
    let Some((_, Value::Array(namespaces))) = cluster.iter().find(|(k, _)| k == "namespaces")
    else {
        return String::new();
    };
    namespaces
        .iter()
        .find_map(|n| match n {
            Value::Map(f) => f
                .iter()
                .find(|(k, _)| k == "owner")
                .and_then(|(_, v)| match v {
                    Value::Str(owner) => Some(owner.clone()),
                    _ => None,
                }),
            _ => None,
        })
        .unwrap_or_default()
}

async fn next_change(subscription: &mut Subscription) -> InfoChange {
    let delivered = subscription.next_record_timeout(WAIT).await.unwrap();
    InfoChange::from_delivered(&delivered).expect("an info change")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_is_changed_by_its_owner_and_read_on_every_member() {
    let dir = temp_dir("cluster-info");
    let config = config(&dir, Some("a"), "");
    let mut a = member("a", &config, None, &[]);
    let b = member("b", &config, Some(&a), &[]);
    let c = member("c", &config, Some(&a), &[]);
    let clients = [
        Client::connect(&a.url()).await.unwrap(),
        Client::connect(&b.url()).await.unwrap(),
        Client::connect(&c.url()).await.unwrap(),
    ];
    for client in &clients {
        eventually("the mesh", || async { routes_up(client).await == 2 }).await;
    }
    let [on_a, on_b, on_c] = &clients;
    // A type declared on b is declared on every member.
    on_b.declare_type(mount_type()).await.unwrap();
    eventually("the type on a and c", || async {
        on_a.info_types()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "Mount")
            && on_c
                .info_types()
                .await
                .unwrap()
                .iter()
                .any(|t| t.name == "Mount")
    })
    .await;
    let mut watching = on_c
        .subscribe_info(SelectionData {
            name_regex: Some("ANTENNA\\..*".into()),
            ..SelectionData::default()
        })
        .await
        .unwrap();

    // Changed through b, applied by a, read at once on b, heard of on c.
    assert_eq!(set(on_b, "ANTENNA.DV01", 10.0).await.unwrap(), 1);
    assert_eq!(azimuth(on_b, "ANTENNA.DV01").await, Some(10.0));
    assert_eq!(azimuth(on_a, "ANTENNA.DV01").await, Some(10.0));
    let change = next_change(&mut watching).await;
    assert_eq!(
        (change.reason.as_str(), change.object.version),
        ("created", 1)
    );
    assert_eq!(set(on_c, "ANTENNA.DV01", 20.0).await.unwrap(), 2);
    assert_eq!(azimuth(on_c, "ANTENNA.DV01").await, Some(20.0));
    let change = next_change(&mut watching).await;
    assert_eq!(
        (change.reason.as_str(), change.object.version),
        ("updated", 2)
    );
    // An object in no namespace is its member's own.
    set(on_b, "LOCAL.thing", 1.0).await.unwrap();
    assert_eq!(azimuth(on_a, "LOCAL.thing").await, None);

    // A member that joins later gets the type and the objects.
    let d = member("d", &config, Some(&a), &[]);
    let on_d = Client::connect(&d.url()).await.unwrap();
    eventually("d's copy", || async {
        azimuth(&on_d, "ANTENNA.DV01").await == Some(20.0)
    })
    .await;

    // Without its owner the namespace cannot change; reads go on from the copies.
    a.kill();
    eventually("b sees a gone", || async { routes_up(on_b).await == 2 }).await;
    let refused = set(on_b, "ANTENNA.DV01", 30.0).await.unwrap_err();
    match refused {
        herald_client::ClientError::Server { code, message } => {
            assert_eq!(code, ErrorCode::Unavailable);
            assert!(message.contains("owned by cluster member `a`"), "{message}");
        }
        other => panic!("expected `unavailable`, got {other:?}"),
    }
    assert_eq!(azimuth(on_b, "ANTENNA.DV01").await, Some(20.0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Cassandra node of the CQL tests (`HERALD_CASSANDRA`, `scripts/cassandra.sh start`).
fn cassandra() -> String {
    std::env::var("HERALD_CASSANDRA").unwrap_or_else(|_| "127.0.0.1:9042".to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leased_namespace_is_taken_over_with_the_values_saved_in_cassandra() {
    let dir = temp_dir("cluster-lease");
    // A keyspace of this test process's own; the CQL tests drop it once the process is gone.
    let archive = format!(
        "[archive]\nbackend = \"cassandra\"\ncontact_points = [\"{}\"]\nkeyspace = \"herald_test_{}\"\n",
        cassandra(),
        std::process::id()
    );
    let config = config(&dir, None, &archive);
    let first = member("first", &config, None, &FAST_HEARTBEAT);
    let second = member("second", &config, Some(&first), &FAST_HEARTBEAT);
    let clients = [
        Client::connect(&first.url()).await.unwrap(),
        Client::connect(&second.url()).await.unwrap(),
    ];
    for client in &clients {
        eventually("the route and the lease", || async {
            routes_up(client).await == 1 && !owner(client).await.is_empty()
        })
        .await;
    }
    let holder = owner(&clients[0]).await;
    let (mut owning, other) = match holder.as_str() {
        "first" => (first, second),
        _ => (second, first),
    };
    let (on_owner, on_other) = match holder.as_str() {
        "first" => (&clients[0], &clients[1]),
        _ => (&clients[1], &clients[0]),
    };
    on_other.declare_type(mount_type()).await.unwrap();
    eventually("the type on the owner", || async {
        on_owner
            .info_types()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "Mount")
    })
    .await;
    // Changed through the other member (forwarded): its copy follows.
    for n in 1..=5 {
        set(on_other, "ANTENNA.DV07", f64::from(n)).await.unwrap();
    }
    assert_eq!(azimuth(on_other, "ANTENNA.DV07").await, Some(5.0));

    // The other member hangs; the owner goes on changing the object (saving each change in
    // Cassandra), then dies. The other's copy is stale: only Cassandra has the last value.
    other.freeze();
    eventually("the owner sees the other hang", || async {
        routes_up(on_owner).await == 0
    })
    .await;
    for n in 6..=20 {
        set(on_owner, "ANTENNA.DV07", f64::from(n)).await.unwrap();
    }
    owning.kill();
    other.thaw();
    let woke = tokio::time::Instant::now();
    eventually("the other member takes the lease", || async {
        owner(on_other).await != holder && !owner(on_other).await.is_empty()
    })
    .await;
    let took = woke.elapsed();
    assert!(
        took < Duration::from_secs(4),
        "took the lease over {took:?} after waking (lease 4 s)"
    );
    assert_eq!(
        azimuth(on_other, "ANTENNA.DV07").await,
        Some(20.0),
        "the value saved in Cassandra, not the stale copy"
    );
    // And it changes again.
    assert_eq!(set(on_other, "ANTENNA.DV07", 21.0).await.unwrap(), 21);
    let _ = std::fs::remove_dir_all(&dir);
}
