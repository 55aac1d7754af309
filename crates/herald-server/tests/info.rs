//! The information service through the real server: types with inheritance, objects and
//! versions, every selection mode, snapshot-then-changes, and bad input.

use std::time::Duration;

use herald_client::{Client, ClientError, Event, InfoChange};
use herald_proto::info::{AttributeData, ObjectData, SelectionData, TypeData, UpdateMode};
use herald_proto::{ErrorCode, Value};
use herald_testkit::TestServer;

fn attribute(name: &str, attr_type: &str) -> AttributeData {
    AttributeData {
        name: name.into(),
        attr_type: attr_type.into(),
        description: format!("the {name}"),
    }
}

fn declared(name: &str, base: Option<&str>, attributes: Vec<AttributeData>) -> TypeData {
    TypeData {
        name: name.into(),
        base: base.map(str::to_string),
        description: String::new(),
        attributes,
    }
}

/// Declares Base { ok: bool }, Derived: Base { n: u32 }, Other { x: double }.
async fn with_types() -> (TestServer, Client) {
    let server = TestServer::start().await;
    let client = Client::connect(&server.url()).await.unwrap();
    client
        .declare_type(declared("Base", None, vec![attribute("ok", "bool")]))
        .await
        .unwrap();
    client
        .declare_type(declared(
            "Derived",
            Some("Base"),
            vec![attribute("n", "u32")],
        ))
        .await
        .unwrap();
    client
        .declare_type(declared("Other", None, vec![attribute("x", "double")]))
        .await
        .unwrap();
    (server, client)
}

fn fields(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

async fn names(
    client: &Client,
    regex: Option<&str>,
    types: Option<&str>,
    any: bool,
) -> Vec<String> {
    let selection = SelectionData {
        name_regex: regex.map(str::to_string),
        types: types.map(str::to_string),
        any,
    };
    client
        .list_info(selection)
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.name)
        .collect()
}

#[tokio::test]
async fn objects_have_versions_and_every_selection_mode_selects_what_it_says() {
    let (server, client) = with_types().await;
    let base = fields(&[("ok", Value::Bool(true))]);
    let derived = fields(&[("ok", Value::Bool(false)), ("n", Value::Int(7))]);
    client
        .set_info("A.base", Some("Base"), base, UpdateMode::Create)
        .await
        .unwrap();
    let created = client
        .set_info("A.derived", Some("Derived"), derived, UpdateMode::Create)
        .await
        .unwrap();
    assert_eq!(created.version, 1);
    client
        .set_info(
            "B.other",
            Some("Other"),
            fields(&[("x", Value::Float(1.5))]),
            UpdateMode::Create,
        )
        .await
        .unwrap();
    let updated = client
        .set_info(
            "A.derived",
            None,
            fields(&[("n", Value::Int(8))]),
            UpdateMode::Update,
        )
        .await
        .unwrap();
    assert_eq!(updated.version, 2);
    assert_eq!(
        updated.attributes,
        fields(&[("ok", Value::Bool(false)), ("n", Value::Int(8))]),
        "partial update merged"
    );

    assert_eq!(names(&client, None, Some("Base"), false).await, ["A.base"]);
    assert_eq!(
        names(&client, None, Some("Base+"), false).await,
        ["A.base", "A.derived"]
    );
    assert_eq!(
        names(&client, None, Some("!Base"), false).await,
        ["A.derived", "B.other"]
    );
    assert_eq!(
        names(&client, None, Some("!Base+"), false).await,
        ["B.other"]
    );
    assert_eq!(
        names(&client, Some("A\\..*"), None, false).await,
        ["A.base", "A.derived"]
    );
    assert_eq!(
        names(&client, Some("A\\..*"), Some("Derived"), false).await,
        ["A.derived"]
    );
    assert_eq!(
        names(&client, Some("B\\..*"), Some("Derived"), true).await,
        ["A.derived", "B.other"]
    );
    assert_eq!(
        names(&client, Some("base"), None, false).await,
        Vec::<String>::new(),
        "regexes match whole names"
    );

    let both = client
        .get_infos(&["A.base", "Z.missing", "A.derived"])
        .await
        .unwrap();
    assert_eq!(
        both.iter()
            .map(|o| o.as_ref().map(|o| o.version))
            .collect::<Vec<_>>(),
        [Some(1), None, Some(2)]
    );
    let deleted = client.delete_info("A.base").await.unwrap();
    assert_eq!(deleted.version, 2);
    assert_eq!(client.get_info("A.base").await.unwrap(), None);
    let types = client.info_types().await.unwrap();
    assert_eq!(
        types.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["Base", "Derived", "Other"]
    );
    server.stop().await;
}

#[tokio::test]
async fn bad_input_is_refused_with_its_reason_and_changes_nothing() {
    let (server, client) = with_types().await;
    let good = client
        .set_info(
            "A.derived",
            Some("Derived"),
            fields(&[("ok", Value::Bool(true)), ("n", Value::Int(1))]),
            UpdateMode::Create,
        )
        .await
        .unwrap();
    let refused = |result: Result<ObjectData, ClientError>| match result {
        Err(ClientError::Server {
            code: ErrorCode::BadInfo,
            message,
        }) => message,
        other => panic!("expected a bad_info error, got {other:?}"),
    };
    let unknown_type = refused(
        client
            .set_info("A.x", Some("Nope"), vec![], UpdateMode::Create)
            .await,
    );
    assert!(unknown_type.contains("`Nope`"), "{unknown_type}");
    let wrong = refused(
        client
            .set_info(
                "A.derived",
                None,
                fields(&[("n", Value::Str("seven".into()))]),
                UpdateMode::Update,
            )
            .await,
    );
    assert!(wrong.contains("`n`"), "{wrong}");
    let out_of_range = refused(
        client
            .set_info(
                "A.derived",
                None,
                fields(&[("n", Value::Int(-1))]),
                UpdateMode::Update,
            )
            .await,
    );
    assert!(out_of_range.contains("-1"), "{out_of_range}");
    let malformed = refused(
        client
            .set_info(
                "nodot",
                Some("Base"),
                fields(&[("ok", Value::Bool(true))]),
                UpdateMode::Create,
            )
            .await,
    );
    assert!(malformed.contains("`nodot`"), "{malformed}");
    let selection = SelectionData {
        name_regex: Some("(".into()),
        types: None,
        any: false,
    };
    match client.list_info(selection).await {
        Err(ClientError::Server {
            code: ErrorCode::BadInfo,
            message,
        }) => assert!(message.contains("`(`"), "{message}"),
        other => panic!("expected a bad regex error, got {other:?}"),
    }
    assert_eq!(
        client.get_info("A.derived").await.unwrap(),
        Some(good),
        "unchanged"
    );
    assert_eq!(client.get_info("A.x").await.unwrap(), None);
    server.stop().await;
}

#[tokio::test]
async fn a_subscriber_sees_the_present_then_every_change_exactly_once() {
    let (server, writer) = with_types().await;
    let count = |n: i64| fields(&[("ok", Value::Bool(true)), ("n", Value::Int(n))]);
    writer
        .set_info("C.counter", Some("Derived"), count(0), UpdateMode::Create)
        .await
        .unwrap();
    writer
        .set_info(
            "C.other",
            Some("Other"),
            fields(&[("x", Value::Float(0.0))]),
            UpdateMode::Create,
        )
        .await
        .unwrap();
    // Updates keep coming while the subscriber joins.
    let updates = {
        let writer = writer.clone();
        tokio::spawn(async move {
            for n in 1..=300 {
                writer
                    .set_info("C.counter", None, count(n), UpdateMode::Update)
                    .await
                    .unwrap();
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(5)).await;
    let reader = Client::connect(&server.url()).await.unwrap();
    let selection = SelectionData {
        name_regex: Some("C\\..*".into()),
        types: Some("Base+".into()),
        any: false,
    };
    let mut subscription = reader.subscribe_info(selection).await.unwrap();
    updates.await.unwrap();

    let mut versions = Vec::new();
    let mut reasons = Vec::new();
    while versions.last() != Some(&301) {
        let event = tokio::time::timeout(Duration::from_secs(5), subscription.next())
            .await
            .unwrap()
            .unwrap();
        let Event::Record(delivered) = event else {
            panic!("no loss expected")
        };
        let change = InfoChange::from_delivered(&delivered).expect("an info record");
        assert_eq!(
            change.object.name, "C.counter",
            "C.other is of another type"
        );
        versions.push(change.object.version);
        reasons.push(change.reason);
    }
    assert_eq!(reasons[0], "snapshot");
    assert!(reasons[1..].iter().all(|r| r == "updated"));
    let first = versions[0];
    assert_eq!(
        versions,
        (first..=301).collect::<Vec<_>>(),
        "contiguous: nothing lost or repeated"
    );
    server.stop().await;
}

/// A list longer than a frame comes as several `INFO_REPLY` parts under one cid, none over
/// the frame limit the client was told; the client joins them.
#[tokio::test]
async fn a_list_larger_than_a_frame_arrives_whole_in_parts() {
    let server = TestServer::start_with(herald_server::Config {
        max_frame_bytes: 16 * 1024,
        ..herald_server::Config::default()
    })
    .await;
    let client = Client::connect(&server.url()).await.unwrap();
    client
        .declare_type(declared("Other", None, vec![attribute("x", "double")]))
        .await
        .unwrap();
    let count = 2_000;
    for n in 0..count {
        client
            .set_info(
                &format!("Many.Object{n:05}"),
                Some("Other"),
                vec![("x".into(), Value::Float(f64::from(n)))],
                UpdateMode::Create,
            )
            .await
            .unwrap();
    }
    let all = client.list_info(SelectionData::default()).await.unwrap();
    assert_eq!(all.len(), count as usize, "every object, once");
    assert!(all.windows(2).all(|w| w[0].name < w[1].name), "by name");
    // A get of every name: too large a request for one frame, refused at the call.
    let names: Vec<String> = (0..count).map(|n| format!("Many.Object{n:05}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let err = client.get_infos(&names).await.unwrap_err();
    assert!(
        err.to_string().starts_with("INFO request of ")
            && err
                .to_string()
                .ends_with("exceeds the server's maximum frame of 16384 bytes"),
        "{err}"
    );
    // A get of 500 whose answer (~50 KiB) is larger than a frame.
    let got = client.get_infos(&names[..500]).await.unwrap();
    assert_eq!(got.iter().flatten().count(), 500);
    assert!(client.error().is_none(), "the connection lived");
    server.stop().await;
}
