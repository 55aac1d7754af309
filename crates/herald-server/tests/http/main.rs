//! The HTTP front door over real loopback connections: every route, the exact JSON and XML
//! forms, every error's status, code and message, and that a change made over HTTP reaches
//! info subscribers and ordinary subscribers of the native protocol.

use std::time::Duration;

use herald_client::{Client, InfoChange};
use herald_proto::info::{AttributeData, SelectionData, TypeData, UpdateMode};
use herald_proto::{Filter, Kind, Value};
use herald_testkit::http::{request, send_raw, HttpResponse};
use herald_testkit::TestServer;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(5);

fn attribute(name: &str, attr_type: &str, description: &str) -> AttributeData {
    AttributeData {
        name: name.into(),
        attr_type: attr_type.into(),
        description: description.into(),
    }
}

fn declared(name: &str, base: Option<&str>, attributes: Vec<AttributeData>) -> TypeData {
    TypeData {
        name: name.into(),
        base: base.map(str::to_string),
        description: format!("the {name} type"),
        attributes,
    }
}

/// Declares Base { ok }, Beam { energy }, RunInfo: Base { run, start, gains, beam } and
/// Other { x }, through the Rust client.
async fn with_types() -> (TestServer, Client) {
    let server = TestServer::start().await;
    let client = Client::connect(&server.url()).await.unwrap();
    let types = [
        declared("Base", None, vec![attribute("ok", "bool", "all good")]),
        declared("Beam", None, vec![attribute("energy", "double", "GeV")]),
        declared(
            "RunInfo",
            Some("Base"),
            vec![
                attribute("run", "u32", "run <number>"),
                attribute("start", "time", "start of run"),
                attribute("gains", "array<float>", "per channel"),
                attribute("beam", "Beam", "the beam"),
            ],
        ),
        declared("Other", None, vec![attribute("x", "double", "")]),
    ];
    for data in types {
        client.declare_type(data).await.unwrap();
    }
    (server, client)
}

async fn get(server: &TestServer, target: &str) -> HttpResponse {
    request(server.http_addr(), "GET", target, None).await
}

async fn put(server: &TestServer, name: &str, body: &str) -> HttpResponse {
    request(
        server.http_addr(),
        "PUT",
        &format!("/info/{name}"),
        Some(body),
    )
    .await
}

async fn delete(server: &TestServer, name: &str) -> HttpResponse {
    request(server.http_addr(), "DELETE", &format!("/info/{name}"), None).await
}

/// Asserts a JSON error answer: status, code and the whole message.
fn assert_error(response: &HttpResponse, status: u16, code: &str, message: &str) {
    assert_eq!(response.status, status, "{}", response.body);
    assert_eq!(
        response.header("content-type"),
        Some("application/json"),
        "{response:?}"
    );
    assert_eq!(
        response.json(),
        json!({ "error": message, "code": code }),
        "{}",
        response.body
    );
}

const RUN_INFO: &str = r#"{"type": "RunInfo", "mode": "create", "time": "2025-11-20T02:00:00.123Z",
    "attributes": {"ok": true, "run": 42, "start": "2025-11-20T11:00:00+09:00",
                   "gains": [1, 2.5], "beam": {"energy": 6.8}}}"#;

/// `RUN_INFO` as the server answers: keys sorted, times in ISO 8601, floats as floats.
const RUN_INFO_JSON: &str = concat!(
    r#"{"attributes":{"beam":{"energy":6.8},"gains":[1.0,2.5],"ok":true,"run":42,"#,
    r#""start":"2025-11-20T02:00:00.000Z"},"name":"RunParams.RunInfo","#,
    r#""time":"2025-11-20T02:00:00.123Z","time_ns":1763604000123000000,"type":"RunInfo","#,
    r#""version":1}"#
);

#[tokio::test]
async fn put_creates_and_get_answers_in_json_and_exact_xml() {
    let (server, client) = with_types().await;
    let created = put(&server, "RunParams.RunInfo", RUN_INFO).await;
    assert_eq!(created.status, 200, "{}", created.body);
    assert_eq!(created.body, RUN_INFO_JSON);

    let json = get(&server, "/info/RunParams.RunInfo").await;
    assert_eq!(json.status, 200);
    assert_eq!(json.header("content-type"), Some("application/json"));
    assert_eq!(json.body, RUN_INFO_JSON);

    let xml = get(&server, "/info/RunParams.RunInfo?format=xml").await;
    assert_eq!(xml.status, 200);
    assert_eq!(
        xml.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    assert_eq!(
        xml.body,
        "<obj name=\"RunParams.RunInfo\" type=\"RunInfo\" time=\"2025-11-20T02:00:00.123Z\">\n  \
         <attr name=\"ok\" descr=\"all good\" type=\"bool\"><v>true</v></attr>\n  \
         <attr name=\"run\" descr=\"run &lt;number&gt;\" type=\"u32\"><v>42</v></attr>\n  \
         <attr name=\"start\" descr=\"start of run\" type=\"time\"><v>2025-11-20T02:00:00.000Z</v></attr>\n  \
         <attr name=\"gains\" descr=\"per channel\" type=\"array&lt;float&gt;\"><v>1</v><v>2.5</v></attr>\n  \
         <attr name=\"beam\" descr=\"the beam\" type=\"Beam\"><v>{energy=6.8}</v></attr>\n\
         </obj>\n"
    );
    assert_eq!(
        get(&server, "/info/RunParams.RunInfo?format=json")
            .await
            .body,
        RUN_INFO_JSON
    );

    // The native protocol reads the same typed values.
    let object = client.get_info("RunParams.RunInfo").await.unwrap().unwrap();
    assert_eq!(object.time, 1_763_604_000_123_000_000);
    assert_eq!(
        object.attributes[2],
        ("start".to_string(), Value::Time(1_763_604_000_000_000_000))
    );
    assert_eq!(
        object.attributes[3],
        (
            "gains".to_string(),
            Value::Array(vec![Value::Float(1.0), Value::Float(2.5)])
        )
    );
    server.stop().await;
}

#[tokio::test]
async fn put_updates_upserts_and_converts_values_by_type() {
    let (server, _client) = with_types().await;
    assert_eq!(
        put(&server, "RunParams.RunInfo", RUN_INFO).await.status,
        200
    );
    // Update: some attributes, a float without fraction for a u32, a time in ns.
    let updated = put(
        &server,
        "RunParams.RunInfo",
        r#"{"mode": "update", "time": 1763604001000000000,
            "attributes": {"run": 43.0, "start": 1763604000500000000}}"#,
    )
    .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    let object = updated.json();
    assert_eq!(object["version"], 2);
    assert_eq!(object["time"], "2025-11-20T02:00:01.000Z");
    assert_eq!(object["attributes"]["run"], 43);
    assert_eq!(object["attributes"]["start"], "2025-11-20T02:00:00.500Z");
    assert_eq!(
        object["attributes"]["ok"], true,
        "untouched attributes stay"
    );
    // Upsert (the default) creates, then updates; an integer for a double becomes a float.
    let first = put(
        &server,
        "Calib.X",
        r#"{"type": "Other", "attributes": {"x": 20}}"#,
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.json()["attributes"]["x"], json!(20.0));
    assert_eq!(first.json()["version"], 1);
    let second = put(&server, "Calib.X", r#"{"attributes": {"x": 1.5}}"#).await;
    assert_eq!(
        (
            second.json()["version"].clone(),
            second.json()["attributes"]["x"].clone()
        ),
        (json!(2), json!(1.5))
    );
    // No time given: now.
    let now = herald_proto::time::now_nanos();
    let stamped = second.json()["time_ns"].as_i64().unwrap();
    assert!((now - stamped).abs() < 60_000_000_000, "{stamped} vs {now}");
    server.stop().await;
}

#[tokio::test]
async fn list_selects_by_regex_type_and_combine() {
    let (server, client) = with_types().await;
    let base = vec![("ok".to_string(), Value::Bool(true))];
    for (name, type_name) in [("A.base", "Base"), ("B.base", "Base"), ("A.other", "Other")] {
        let attributes = match type_name {
            "Other" => vec![("x".to_string(), Value::Float(1.0))],
            _ => base.clone(),
        };
        client
            .set_info(name, Some(type_name), attributes, UpdateMode::Create)
            .await
            .unwrap();
    }
    assert_eq!(put(&server, "A.run", RUN_INFO).await.status, 200);
    let names = |response: HttpResponse| -> Vec<String> {
        assert_eq!(response.status, 200, "{}", response.body);
        let listed = response.json();
        listed
            .as_array()
            .unwrap()
            .iter()
            .map(|object| object["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(get(&server, "/info").await),
        ["A.base", "A.other", "A.run", "B.base"]
    );
    assert_eq!(
        names(get(&server, "/info?match=A%5C..*").await),
        ["A.base", "A.other", "A.run"]
    );
    assert_eq!(
        names(get(&server, "/info?type=Base").await),
        ["A.base", "B.base"]
    );
    assert_eq!(
        names(get(&server, "/info?type=Base%2B").await),
        ["A.base", "A.run", "B.base"]
    );
    assert_eq!(
        names(get(&server, "/info?type=!Base%2B").await),
        ["A.other"]
    );
    assert_eq!(
        names(get(&server, "/info?match=A%5C..*&type=Base%2B").await),
        ["A.base", "A.run"]
    );
    assert_eq!(
        names(get(&server, "/info?match=B%5C..*&type=Other&combine=or").await),
        ["A.other", "B.base"]
    );
    assert_eq!(
        names(get(&server, "/info?match=Z.*").await),
        Vec::<String>::new()
    );
    let listed = get(&server, "/info?match=A%5C.run").await.json();
    assert_eq!(
        listed[0].to_string(),
        RUN_INFO_JSON.replace("RunParams.RunInfo", "A.run")
    );
    server.stop().await;
}

#[tokio::test]
async fn a_long_list_is_streamed_in_chunks_and_parses_whole() {
    let (server, client) = with_types().await;
    let count = 2_500; // more than two chunks of 1,000
    for n in 0..count {
        client
            .set_info(
                &format!("Long.Object{n:05}"),
                Some("Other"),
                vec![("x".into(), Value::Float(f64::from(n)))],
                UpdateMode::Create,
            )
            .await
            .unwrap();
    }
    let answer = get(&server, "/info?match=Long%5C..*").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("transfer-encoding"), Some("chunked"));
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let listed = answer.json();
    let listed = listed.as_array().expect("a JSON array");
    assert_eq!(listed.len(), count as usize);
    assert_eq!(listed[2_499]["name"], "Long.Object02499");
    assert_eq!(get(&server, "/info?match=Nothing.*").await.body, "[]");
    server.stop().await;
}

#[tokio::test]
async fn delete_answers_with_the_object_then_404() {
    let (server, _client) = with_types().await;
    assert_eq!(
        put(&server, "RunParams.RunInfo", RUN_INFO).await.status,
        200
    );
    let deleted = delete(&server, "RunParams.RunInfo").await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(deleted.json()["version"], 2);
    assert_eq!(deleted.json()["attributes"]["run"], 42);
    let again = delete(&server, "RunParams.RunInfo").await;
    assert_error(
        &again,
        404,
        "not_found",
        "object `RunParams.RunInfo` does not exist",
    );
    let gone = get(&server, "/info/RunParams.RunInfo").await;
    assert_error(
        &gone,
        404,
        "not_found",
        "object `RunParams.RunInfo` does not exist",
    );
    server.stop().await;
}

#[tokio::test]
async fn types_are_listed_by_name() {
    let (server, _client) = with_types().await;
    let response = get(&server, "/info-types").await;
    assert_eq!(response.status, 200);
    let types = response.json();
    let names: Vec<&str> = types
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Base", "Beam", "Other", "RunInfo"]);
    assert_eq!(
        types[3],
        json!({
            "name": "RunInfo", "base": "Base", "description": "the RunInfo type",
            "attributes": [
                {"name": "run", "type": "u32", "description": "run <number>"},
                {"name": "start", "type": "time", "description": "start of run"},
                {"name": "gains", "type": "array<float>", "description": "per channel"},
                {"name": "beam", "type": "Beam", "description": "the beam"},
            ],
        })
    );
    assert_eq!(types[0]["base"], json!(null));
    server.stop().await;
}

mod archive;
mod errors;
mod limits;
mod metrics;
mod subscribers;
mod ui;
mod websocket;
