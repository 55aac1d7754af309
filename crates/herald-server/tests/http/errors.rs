//! Every error: its status, its code and its whole message; and the store unchanged after
//! a refused change.

use super::*;

#[tokio::test]
async fn refused_changes_name_the_problem_and_change_nothing() {
    let (server, _client) = with_types().await;
    assert_eq!(
        put(&server, "RunParams.RunInfo", RUN_INFO).await.status,
        200
    );
    let cases: [(&str, &str, u16, &str, &str); 13] = [
        (
            "RunParams.New",
            r#"{"type": "RunInfoo", "attributes": {}}"#,
            400,
            "unknown_type",
            "unknown type `RunInfoo` (declare it first)",
        ),
        (
            "RunParams.RunInfo",
            r#"{"attributes": {"run": "many"}}"#,
            400,
            "bad_attribute",
            "attribute `run` of type `RunInfo` expects u32, found string `many`",
        ),
        (
            "RunParams.RunInfo",
            r#"{"attributes": {"run": -1}}"#,
            400,
            "bad_attribute",
            "attribute `run` of type `RunInfo`: value `-1` is out of range for u32 (0..=4294967295)",
        ),
        (
            "RunParams.RunInfo",
            r#"{"attributes": {"beam": {"energy": 1, "spin": 2}}}"#,
            400,
            "bad_attribute",
            "type `RunInfo` has no attribute `beam.spin`",
        ),
        (
            "RunParams.RunInfo",
            r#"{"attributes": {"start": "tomorrow at 12:00 UTC"}}"#,
            400,
            "bad_attribute",
            "attribute `start` of type `RunInfo` expects time, found string `tomorrow at 12:00 UTC` (expected `YYYY-MM-DDTHH:MM:SS`)",
        ),
        (
            "RunParams.RunInfo",
            r#"{"attributes": {"gains": [1, null]}}"#,
            400,
            "bad_attribute",
            "attribute `gains[1]` of type `RunInfo` expects float, found null",
        ),
        (
            "RunParams",
            r#"{"type": "Base", "attributes": {"ok": true}}"#,
            400,
            "bad_name",
            "malformed object name `RunParams`: expected `Namespace.Object` (at least two dot-separated tokens)",
        ),
        (
            "RunParams.RunInfo",
            r#"{"attributes": {"run": 1},}"#,
            400,
            "bad_json",
            "bad JSON body: trailing comma at line 1 column 27",
        ),
        (
            "RunParams.RunInfo",
            r#"{"attributes": {"run": 1}, "mode": "replace"}"#,
            400,
            "bad_json",
            "bad JSON body: unknown variant `replace`, expected one of `create`, `update`, `upsert` at line 1 column 44",
        ),
        (
            "RunParams.RunInfo",
            r#"{"atributes": {"run": 1}}"#,
            400,
            "bad_json",
            "bad JSON body: unknown field `atributes`, expected one of `type`, `attributes`, `mode`, `time` at line 1 column 12",
        ),
        (
            "RunParams.RunInfo",
            r#"{"attributes": {"run": 1}, "time": "2025-11-20T02:00:00"}"#,
            400,
            "bad_time",
            "bad time `2025-11-20T02:00:00`: no zone (add `Z` for UTC or an offset like `+09:00`) (expected ISO 8601 with a zone, e.g. `2026-11-20T02:00:00.123Z`)",
        ),
        (
            "RunParams.New",
            r#"{"attributes": {"ok": true}}"#,
            400,
            "missing_type",
            "object `RunParams.New` does not exist and no type was given (creating an object needs its type)",
        ),
        (
            "RunParams.RunInfo",
            r#"{"type": "Other", "attributes": {"x": 1}}"#,
            409,
            "type_change",
            "object `RunParams.RunInfo` has type `RunInfo`, not `Other` (an object's type cannot change)",
        ),
    ];
    for (name, body, status, code, message) in cases {
        assert_error(&put(&server, name, body).await, status, code, message);
    }
    let missing = put(
        &server,
        "RunParams.Nope",
        r#"{"mode": "update", "attributes": {}}"#,
    )
    .await;
    assert_error(
        &missing,
        404,
        "not_found",
        "object `RunParams.Nope` does not exist",
    );
    let exists = put(&server, "RunParams.RunInfo", RUN_INFO).await;
    assert_error(
        &exists,
        409,
        "exists",
        "object `RunParams.RunInfo` already exists (update it, or upsert)",
    );
    // Nothing changed.
    assert_eq!(
        get(&server, "/info/RunParams.RunInfo").await.body,
        RUN_INFO_JSON
    );
    assert_eq!(
        get(&server, "/info").await.json().as_array().unwrap().len(),
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn bad_reads_and_routes_are_json_errors() {
    let (server, _client) = with_types().await;
    let cases = [
        (
            "/info/RunParams.Nope",
            404,
            "not_found",
            "object `RunParams.Nope` does not exist",
        ),
        (
            "/info/Run%20Params.x",
            400,
            "bad_name",
            "malformed object name `Run Params.x`: contains U+0020 (no whitespace or control characters)",
        ),
        (
            "/info/A.b?format=yaml",
            400,
            "bad_query",
            "bad query string: format: unknown variant `yaml`, expected `json` or `xml`",
        ),
        (
            "/info/A.b?fromat=xml",
            400,
            "bad_query",
            "bad query string: fromat: unknown field `fromat`, expected `format`",
        ),
        (
            "/info?match=(",
            400,
            "bad_regex",
            "bad name regex `(`: regex parse error:\n    (\n    ^\nerror: unclosed group",
        ),
        (
            "/info?type=Base%2B%2B",
            400,
            "bad_type_selection",
            "bad type selection `Base++`: `Base+` is not a type name: contains `+` (allowed: letters, digits and `_` `.` `:` `-`) (expected `T`, `T+`, `!T` or `!T+`)",
        ),
        (
            "/info?combine=xor",
            400,
            "bad_query",
            "bad query string: combine: unknown variant `xor`, expected `and` or `or`",
        ),
        (
            "/info?matches=x",
            400,
            "bad_query",
            "bad query string: matches: unknown field `matches`, expected one of `match`, `type`, `combine`",
        ),
        (
            "/info/RunParams.RunInfo%ZZ",
            400,
            "bad_path",
            "bad percent-encoding `%ZZ` at byte 23 of the path `/info/RunParams.RunInfo%ZZ`: `%` \
             must be followed by two hexadecimal digits (write a literal `%` as `%25`)",
        ),
        (
            "/archive/logs?text=100%",
            400,
            "bad_query",
            "bad percent-encoding `%` at byte 8 of the query `text=100%`: `%` must be followed \
             by two hexadecimal digits (write a literal `%` as `%25`)",
        ),
        ("/nope", 404, "unknown_route", "no route for GET `/nope`"),
        ("/info/A/b", 404, "unknown_route", "no route for GET `/info/A/b`"),
    ];
    for (target, status, code, message) in cases {
        assert_error(&get(&server, target).await, status, code, message);
    }
    let post = request(server.http_addr(), "POST", "/info/A.b", Some("{}")).await;
    assert_error(
        &post,
        405,
        "method_not_allowed",
        "method POST is not allowed on `/info/A.b`",
    );
    let raw = send_raw(
        server.http_addr(),
        b"GET /info/A.%FF HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(
        (raw.status, raw.json()["code"].as_str()),
        (400, Some("bad_path")),
        "{}",
        raw.body
    );
    server.stop().await;
}

#[tokio::test]
async fn a_body_larger_than_a_frame_is_refused() {
    let config = herald_server::Config {
        max_frame_bytes: 1024,
        ..herald_server::Config::default()
    };
    let server = TestServer::start_with(config).await;
    let body = format!(
        r#"{{"type": "T", "attributes": {{"s": "{}"}}}}"#,
        "x".repeat(2000)
    );
    let response = put(&server, "A.b", &body).await;
    assert_error(
        &response,
        413,
        "body_too_large",
        "cannot read the request body: length limit exceeded",
    );
    // OpenTelemetry logs in: the same JSON error, not the body extractor's plain text.
    let logs = request(server.http_addr(), "POST", "/v1/logs", Some(&body)).await;
    assert_error(
        &logs,
        413,
        "body_too_large",
        "cannot read the request body: length limit exceeded",
    );
    server.stop().await;
}
