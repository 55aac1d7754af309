//! The text targets: globs, priority sets and filters, server URLs, the archive routes'
//! query strings and times.

use axum::extract::Query;
use axum::http::Uri;
use herald_client::ServerUrl;
use herald_proto::glob::MAX_PATTERN_BYTES;
use herald_proto::msgpack::Reader;
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::record::check_subject;
use herald_proto::time::{format_iso8601, format_iso8601_exact, parse_iso8601, parse_time_spec};
use herald_proto::{Filter, Glob, GlobError, KindSet, Policy, Priority, PrioritySet};
use herald_server::http::archive::params::{cursor_text, ArchiveParams, DEFAULT_LIMIT};

use super::selector;

/// Longest text (in characters) checked against the reference matcher, which takes time
/// proportional to pattern length × text length.
const MAX_REFERENCE_CHARS: usize = 512;

/// Input: `mode: u8 | text`. Mode `% 3`: 0, `pattern\ntext` — the glob must match exactly
/// what a naive matcher matches; 1, a priority set, priority, kind set or policy as a
/// command line takes it; 2, up to five lines (subject, type, priorities, audiences
/// separated by commas, kinds; an empty line leaves that dimension open) as a filter.
pub fn filter_parse(data: &[u8]) {
    let Some((mode, rest)) = selector(data) else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match mode % 3 {
        0 => {
            let (pattern, subject) = text.split_once('\n').unwrap_or((&text, ""));
            check_glob(pattern, subject);
        }
        1 => check_sets(&text),
        _ => check_filter(&text),
    }
}

fn check_glob(pattern: &str, subject: &str) {
    let glob = match Glob::new(pattern) {
        Ok(glob) => glob,
        Err(GlobError::Empty) => return assert!(pattern.is_empty()),
        Err(GlobError::TooLong(len)) => {
            return assert!(len == pattern.len() && len > MAX_PATTERN_BYTES)
        }
        Err(GlobError::ControlCharacter { code, .. }) => {
            let found = pattern.chars().find(|c| c.is_control()).map(u32::from);
            return assert_eq!(found, Some(code));
        }
        Err(other) => panic!("unexpected glob error {other}"),
    };
    assert!(pattern.len() <= MAX_PATTERN_BYTES && !pattern.chars().any(char::is_control));
    assert!(!glob.as_str().contains("**"), "`**` is kept as `*`");
    assert_eq!(
        Glob::new(glob.as_str()).as_ref(),
        Ok(&glob),
        "a glob's text compiles to it"
    );
    assert_eq!(glob.is_any(), pattern.chars().all(|c| c == '*'));
    let pattern_chars: Vec<char> = pattern.chars().collect();
    for text in [subject, pattern, glob.as_str(), ""] {
        let chars: Vec<char> = text.chars().collect();
        if chars.len() <= MAX_REFERENCE_CHARS {
            let expected = reference_match(&pattern_chars, &chars);
            assert_eq!(glob.matches(text), expected, "`{pattern}` against `{text}`");
        }
    }
    if check_subject(subject).is_ok() {
        let exact = Glob::new(subject).expect("a subject is a pattern");
        assert!(exact.matches(subject), "a subject matches itself");
    }
}

/// A reference matcher with the semantics of glob.rs's test-only `naive` (`*` any run, `?`
/// one character), written row by row so that it stays polynomial for patterns of up to
/// 1 KiB (that one recurses, and is private to glob.rs's tests).
fn reference_match(pattern: &[char], text: &[char]) -> bool {
    // row[j]: the pattern so far matches text[..j].
    let mut row = vec![false; text.len() + 1];
    row[0] = true;
    for &p in pattern {
        let mut next = vec![false; text.len() + 1];
        match p {
            '*' => {
                let mut any = false;
                for j in 0..=text.len() {
                    any |= row[j];
                    next[j] = any;
                }
            }
            '?' => (1..=text.len()).for_each(|j| next[j] = row[j - 1]),
            c => (1..=text.len()).for_each(|j| next[j] = row[j - 1] && text[j - 1] == c),
        }
        row = next;
    }
    row[text.len()]
}

fn check_sets(text: &str) {
    if let Ok(set) = text.parse::<PrioritySet>() {
        assert!(!set.is_empty() && set.bits() & !PrioritySet::ALL.bits() == 0);
        assert_eq!(set.to_string().parse::<PrioritySet>(), Ok(set), "`{text}`");
    }
    if let Ok(priority) = text.parse::<Priority>() {
        assert_eq!(priority.name().parse::<Priority>(), Ok(priority));
        assert_eq!(
            (priority as u8).to_string().parse::<Priority>(),
            Ok(priority)
        );
        let alone: PrioritySet = priority.name().parse().expect("a name is a set");
        let members: Vec<Priority> = ALL_PRIORITIES
            .into_iter()
            .filter(|p| alone.contains(*p))
            .collect();
        assert_eq!(members, [priority]);
    }
    // Parsed for the no-panic coverage: a set can only hold bits of parsed kinds.
    let _ = text.parse::<KindSet>();
    if let Ok(policy) = text.parse::<Policy>() {
        assert_eq!(policy.name().parse::<Policy>(), Ok(policy));
    }
}

fn check_filter(text: &str) {
    let mut lines = text
        .lines()
        .map(|line| Some(line).filter(|l| !l.is_empty()));
    let mut next = || lines.next().flatten();
    let (subject, type_name, priorities) = (next(), next(), next());
    let audience: Vec<String> = next()
        .map(|names| names.split(',').map(String::from).collect())
        .unwrap_or_default();
    let kinds = next();
    let Ok(filter) = Filter::parse(subject, type_name, priorities, &audience, kinds) else {
        return;
    };
    let mut encoded = Vec::new();
    filter.encode(&mut encoded);
    let again = Filter::decode(&mut Reader::new(&encoded)).expect("an encoded filter decodes");
    assert_eq!(again, filter);
}

/// Input: text, as `herald --server` or `HERALD_SERVER` takes it. A URL that parses names
/// at least one `host:port` with a port of 1 or more, and its text form parses back to the
/// same servers.
pub fn server_url(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let url = match text.parse::<ServerUrl>() {
        Ok(url) => url,
        Err(err) => return assert_eq!(err.url, text),
    };
    assert!(!url.servers.is_empty());
    for server in &url.servers {
        let (host, port) = server.rsplit_once(':').expect("servers are host:port");
        assert!(
            !host.is_empty() && !server.contains([',', '?']),
            "`{server}`"
        );
        assert!(port.parse::<u16>().is_ok_and(|p| p != 0), "`{server}`");
    }
    for option in [&url.name, &url.token].into_iter().flatten() {
        assert!(!option.contains('&'), "`{option}`");
    }
    let again: ServerUrl = url
        .to_string()
        .parse()
        .unwrap_or_else(|err| panic!("`{url}` does not parse back: {err}"));
    assert_eq!(again.servers, url.servers);
}

/// A fixed "now", so that relative times do not depend on the clock.
const NOW: i64 = 1_763_604_000_123_456_789;

/// Input: `mode: u8 | text`. Mode even: the query string of `GET /archive/logs?…`, parsed as
/// axum parses it into `ArchiveParams`, then into each query. Mode odd: a time, as `from`,
/// `to` and `time` take it; the first 8 bytes also as nanoseconds to format and parse back.
pub fn http_params(data: &[u8]) {
    let Some((mode, rest)) = selector(data) else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if mode % 2 == 0 {
        check_query_string(&text);
        return;
    }
    check_time_text(&text);
    if let Some(nanos) = rest.first_chunk::<8>() {
        check_nanos(i64::from_le_bytes(*nanos));
    }
}

fn check_query_string(query: &str) {
    let Ok(uri) = format!("/archive/logs?{query}").parse::<Uri>() else {
        return;
    };
    let Ok(Query(params)) = Query::<ArchiveParams>::try_from_uri(&uri) else {
        return;
    };
    let times_parse = [&params.from, &params.to]
        .into_iter()
        .flatten()
        .all(|text| parse_time_spec(text, NOW).is_ok());
    assert_eq!(params.range().is_ok(), times_parse, "{params:?}");
    let after = params.after();
    if let Ok(Some(cursor)) = &after {
        let again = ArchiveParams {
            after: Some(cursor_text(*cursor)),
            ..ArchiveParams::default()
        };
        assert_eq!(
            again.after().ok(),
            Some(Some(*cursor)),
            "cursor text round trip"
        );
    }
    let priority_parses = params
        .priority
        .as_ref()
        .is_none_or(|text| text.parse::<PrioritySet>().is_ok());
    let logs = params.logs();
    assert_eq!(
        logs.is_ok(),
        times_parse && after.is_ok() && priority_parses
    );
    if let Ok(logs) = logs {
        assert_eq!(logs.limit, params.limit.unwrap_or(DEFAULT_LIMIT));
        assert_eq!(logs.subject, params.subject);
    }
    assert_eq!(params.samples("A.b").is_ok(), times_parse && after.is_ok());
    let buckets = params.buckets("A.b");
    assert_eq!(buckets.is_ok(), params.buckets.is_none() || times_parse);
    let _ = params.format();
}

fn check_time_text(text: &str) {
    let spec = parse_time_spec(text, NOW);
    if text.trim().eq_ignore_ascii_case("now") {
        assert_eq!(spec, Ok(NOW));
    }
    if let Ok(nanos) = parse_iso8601(text) {
        assert_eq!(spec.as_ref().ok(), Some(&nanos), "`{text}` as a query time");
        assert_eq!(parse_iso8601(&format_iso8601_exact(nanos)), Ok(nanos));
    }
}

/// Every instant formats exactly and parses back; to the millisecond, it parses back to
/// the instant rounded down, when that is still within 64 bits.
fn check_nanos(nanos: i64) {
    let exact = format_iso8601_exact(nanos);
    assert_eq!(parse_iso8601(&exact), Ok(nanos), "`{exact}`");
    assert_eq!(
        parse_time_spec(&exact, NOW),
        Ok(nanos),
        "`{exact}` as a query time"
    );
    let millis = format_iso8601(nanos);
    let floor = i128::from(nanos) - i128::from(nanos.rem_euclid(1_000_000));
    match i64::try_from(floor) {
        Ok(floor) => assert_eq!(parse_iso8601(&millis), Ok(floor), "`{millis}`"),
        Err(_) => assert!(parse_iso8601(&millis).is_err(), "`{millis}`"),
    }
}
