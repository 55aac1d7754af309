//! The non-blocking logger against a real server: what arrives, what is kept back, what is
//! dropped and reported, and when it is sent.

use std::time::{Duration, Instant};

use herald_client::logger::{DROP_REPORT_TYPE, FLIGHT_RECORDER_FIELD, THREAD_NAME_BYTES};
use herald_client::{Client, Logger, LoggerError, LoggerOptions, Subscription, WhenFull};
use herald_proto::{Filter, Kind, Priority, Record, Value};
use herald_testkit::TestServer;

const WAIT: Duration = Duration::from_secs(5);
/// A tick no test waits for: records arrive only if something else sends them.
const NEVER: Duration = Duration::from_secs(3600);

struct Setup {
    server: TestServer,
    subscription: Subscription,
    client: Client,
}

/// Starts a server, subscribes to `APP*`, and connects the client that logs.
async fn setup() -> Setup {
    let server = TestServer::start().await;
    let subscriber = Client::connect(&server.url()).await.unwrap();
    let subscription = subscriber
        .subscribe(Filter::subject("APP*").unwrap())
        .await
        .unwrap();
    let client = Client::connect(&server.url()).await.unwrap();
    Setup {
        server,
        subscription,
        client,
    }
}

/// Options that send nothing until flushed, woken, or dropped.
fn quiet(subject: &str) -> LoggerOptions {
    LoggerOptions {
        tick: NEVER,
        batch_records: 1_000_000,
        ..LoggerOptions::new(subject)
    }
}

async fn next(subscription: &mut Subscription) -> Record {
    subscription
        .next_record_timeout(WAIT)
        .await
        .expect("a record arrives")
        .into_record()
}

async fn texts(subscription: &mut Subscription, count: usize) -> Vec<String> {
    let mut texts = Vec::new();
    for _ in 0..count {
        texts.push(next(subscription).await.text);
    }
    texts
}

async fn assert_nothing_more(subscription: &mut Subscription) {
    let more = subscription
        .next_record_timeout(Duration::from_millis(300))
        .await;
    assert!(
        more.is_err(),
        "unexpected record: {:?}",
        more.map(|d| d.into_record())
    );
}

fn field<'a>(record: &'a Record, name: &str) -> Option<&'a Value> {
    record
        .fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

#[tokio::test]
async fn records_arrive_with_priority_subject_origin_and_fields() {
    let mut s = setup().await;
    let logger = Logger::new(&s.client, quiet("APP.mount")).unwrap();
    let fields = vec![("axis".to_string(), Value::from("az"))];
    logger.log(Priority::Warning, "encoder fault", fields.clone());
    let line = line!() - 1;
    logger.log_on(
        "APP.other",
        Priority::Notice,
        "on another subject",
        Vec::new(),
    );
    logger.with_subject("APP.third").unwrap().info("third");
    logger.log_fmt(Priority::Info, format_args!("run {} started", 42));
    logger.flush(WAIT).await.unwrap();

    let first = next(&mut s.subscription).await;
    assert_eq!(first.kind, Kind::Log);
    assert_eq!(first.subject, "APP.mount");
    assert_eq!(first.priority, Priority::Warning);
    assert_eq!(first.text, "encoder fault");
    assert_eq!(first.fields, fields);
    assert!(!first.origin.host.is_empty());
    assert!(first
        .origin
        .process
        .contains(&std::process::id().to_string()));
    let thread = std::thread::current();
    assert!(thread.name().unwrap().starts_with(&first.origin.thread));
    assert_eq!(first.origin.thread.len(), THREAD_NAME_BYTES);
    assert!(
        first.origin.file.ends_with("logger.rs"),
        "{}",
        first.origin.file
    );
    assert_eq!(first.origin.line, Some(u64::from(line)));
    let age = herald_proto::time::now_nanos() - first.time;
    assert!((0..5_000_000_000).contains(&age), "time {}", first.time);

    let second = next(&mut s.subscription).await;
    assert_eq!(
        (second.subject.as_str(), second.priority),
        ("APP.other", Priority::Notice)
    );
    let third = next(&mut s.subscription).await;
    assert_eq!(
        (third.subject.as_str(), third.text.as_str()),
        ("APP.third", "third")
    );
    assert_eq!(next(&mut s.subscription).await.text, "run 42 started");
    assert_eq!(logger.dropped(), 0);
}

#[tokio::test]
async fn below_threshold_records_stay_back_and_the_threshold_changes_at_run_time() {
    let mut s = setup().await;
    let options = LoggerOptions {
        flight_recorder_records: 0,
        ..quiet("APP")
    };
    let logger = Logger::new(&s.client, options).unwrap();
    assert_eq!(logger.threshold(), Priority::Info);
    logger.debug("a");
    logger.info("b");
    logger.set_threshold(Priority::Debug);
    logger.debug("c");
    logger.trace("not c");
    let clone = logger.clone();
    clone.set_threshold(Priority::Warning);
    assert_eq!(logger.threshold(), Priority::Warning);
    assert!(!logger.enabled(Priority::Notice));
    logger.notice("d");
    logger.warning("e");
    logger.flush(WAIT).await.unwrap();
    assert_eq!(texts(&mut s.subscription, 3).await, ["b", "c", "e"]);
    assert_nothing_more(&mut s.subscription).await;
}

#[tokio::test]
async fn a_full_buffer_drops_counts_exactly_and_reports_the_drops() {
    let mut s = setup().await;
    let options = LoggerOptions {
        buffer_records: 4,
        buffer_shards: 1,
        ..quiet("APP")
    };
    let logger = Logger::new(&s.client, options).unwrap();
    for n in 0..7 {
        logger.info(&format!("info {n}"));
    }
    for n in 0..3 {
        logger.notice(&format!("notice {n}"));
    }
    assert_eq!(logger.dropped(), 6);
    assert_eq!(logger.pending(), 4);
    logger.flush(WAIT).await.unwrap();
    let kept = texts(&mut s.subscription, 4).await;
    assert_eq!(kept, ["info 0", "info 1", "info 2", "info 3"]);

    let report = next(&mut s.subscription).await;
    assert_eq!(report.subject, "APP");
    assert_eq!(report.priority, Priority::Warning);
    assert_eq!(report.type_name, DROP_REPORT_TYPE);
    assert_eq!(field(&report, "dropped"), Some(&Value::Int(6)));
    let by_priority = Value::Map(vec![
        ("INFO".to_string(), Value::Int(3)),
        ("NOTICE".to_string(), Value::Int(3)),
    ]);
    assert_eq!(field(&report, "dropped_by_priority"), Some(&by_priority));
    assert!(report.text.contains("dropped 6 records"), "{}", report.text);
    assert!(report.origin.thread.is_empty() && report.origin.line.is_none());

    // Reported drops are not reported twice; new ones are.
    logger.info("after");
    logger.flush(WAIT).await.unwrap();
    assert_eq!(next(&mut s.subscription).await.text, "after");
    assert_nothing_more(&mut s.subscription).await;
    for n in 0..6 {
        logger.warning(&format!("warning {n}"));
    }
    assert_eq!(logger.dropped(), 8);
    logger.flush(WAIT).await.unwrap();
    assert_eq!(texts(&mut s.subscription, 4).await.len(), 4);
    let report = next(&mut s.subscription).await;
    assert_eq!(field(&report, "dropped"), Some(&Value::Int(2)));
    let by_priority = Value::Map(vec![("WARNING".to_string(), Value::Int(2))]);
    assert_eq!(field(&report, "dropped_by_priority"), Some(&by_priority));
    assert_nothing_more(&mut s.subscription).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logger_that_waits_when_full_loses_nothing() {
    let mut s = setup().await;
    let options = LoggerOptions {
        buffer_records: 2,
        batch_records: 1,
        when_full: WhenFull::Wait(Duration::from_secs(5)),
        ..LoggerOptions::new("APP")
    };
    let logger = Logger::new(&s.client, options).unwrap();
    for n in 0..50 {
        logger.info(&n.to_string());
    }
    logger.flush(WAIT).await.unwrap();
    let expected: Vec<String> = (0..50).map(|n| n.to_string()).collect();
    assert_eq!(texts(&mut s.subscription, 50).await, expected);
    assert_eq!(logger.dropped(), 0);
}

#[tokio::test]
async fn the_flight_recorder_sends_recent_context_before_an_error() {
    let mut s = setup().await;
    let options = LoggerOptions {
        flight_recorder_records: 3,
        flight_recorder_age: Duration::from_millis(400),
        ..quiet("APP")
    };
    let logger = Logger::new(&s.client, options).unwrap();
    logger.debug("stale");
    tokio::time::sleep(Duration::from_millis(600)).await;
    logger.debug("d1");
    logger.trace("d2");
    logger.info("sent");
    logger.error("first failure");
    // The ring holds at most 3: d3 and d4 are pushed out.
    for n in 3..8 {
        logger.debug(&format!("d{n}"));
    }
    logger.critical("second failure");
    logger.error("third failure");
    logger.flush(WAIT).await.unwrap();

    let mut arrived = Vec::new();
    for _ in 0..9 {
        let Ok(record) = s.subscription.next_record_timeout(WAIT).await else {
            panic!("{arrived:?}");
        };
        let record = record.into_record();
        let context = field(&record, FLIGHT_RECORDER_FIELD) == Some(&Value::Bool(true));
        arrived.push(format!(
            "{}{}",
            record.text,
            if context { " (context)" } else { "" }
        ));
    }
    let expected = [
        "sent",
        "d1 (context)",
        "d2 (context)",
        "first failure",
        "d5 (context)",
        "d6 (context)",
        "d7 (context)",
        "second failure",
        "third failure",
    ];
    assert_eq!(arrived, expected);
    assert_nothing_more(&mut s.subscription).await;
}

#[tokio::test]
async fn emergency_is_sent_at_once_and_a_full_batch_before_the_tick() {
    let mut s = setup().await;
    let logger = Logger::new(&s.client, quiet("APP")).unwrap();
    logger.info("waiting");
    assert_nothing_more(&mut s.subscription).await;
    let started = Instant::now();
    logger.emergency("now");
    assert_eq!(texts(&mut s.subscription, 2).await, ["waiting", "now"]);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    let options = LoggerOptions {
        batch_records: 5,
        ..quiet("APP")
    };
    let batched = Logger::new(&s.client, options).unwrap();
    // Each thread looks at the buffer's length every 16th call, so 40 calls see a batch.
    let started = Instant::now();
    for n in 0..40 {
        batched.info(&n.to_string());
    }
    let expected: Vec<String> = (0..40).map(|n| n.to_string()).collect();
    assert_eq!(texts(&mut s.subscription, 40).await, expected);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_tick_sends_without_a_flush() {
    let mut s = setup().await;
    let logger = Logger::new(&s.client, LoggerOptions::new("APP")).unwrap();
    logger.info("ticked");
    assert_eq!(next(&mut s.subscription).await.text, "ticked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_handle_flushes() {
    let mut s = setup().await;
    let logger = Logger::new(&s.client, quiet("APP")).unwrap();
    let clone = logger.clone();
    for n in 0..100 {
        clone.info(&n.to_string());
    }
    drop(clone);
    assert_nothing_more(&mut s.subscription).await;
    let started = Instant::now();
    drop(logger);
    assert!(started.elapsed() < Duration::from_secs(2));
    // The drop returned only once the server had the records.
    let records_in = s.server.monitor().snapshot();
    let records_in = records_in.iter().find(|(k, _)| k == "records_in");
    assert_eq!(records_in.map(|(_, v)| v), Some(&Value::Int(100)));
    drop(s.client);
    let expected: Vec<String> = (0..100).map(|n| n.to_string()).collect();
    assert_eq!(texts(&mut s.subscription, 100).await, expected);
}

#[tokio::test]
async fn on_a_current_thread_runtime_a_drop_flushes_once_the_runtime_runs() {
    let mut s = setup().await;
    let logger = Logger::new(&s.client, quiet("APP")).unwrap();
    logger.info("last words");
    let started = Instant::now();
    drop(logger);
    assert!(started.elapsed() < Duration::from_millis(100));
    assert_eq!(next(&mut s.subscription).await.text, "last words");
}

#[tokio::test]
async fn close_flushes_and_later_records_are_counted() {
    let mut s = setup().await;
    let logger = Logger::new(&s.client, quiet("APP")).unwrap();
    let clone = logger.clone();
    logger.warning("before close");
    logger.close(WAIT).await.unwrap();
    assert_eq!(next(&mut s.subscription).await.text, "before close");
    assert!(clone.is_closed());
    clone.error("after close");
    clone.debug("below the threshold: would not have been sent anyway");
    assert_eq!(clone.dropped(), 1);
    assert!(clone.flush(WAIT).await.is_err());
    assert_nothing_more(&mut s.subscription).await;
}

#[tokio::test]
async fn bad_subjects_are_refused_or_counted() {
    let s = setup().await;
    let bad = Logger::new(&s.client, LoggerOptions::new("APP*"));
    assert!(matches!(bad, Err(LoggerError::InvalidSubject(_))));
    let logger = Logger::new(&s.client, quiet("APP")).unwrap();
    assert!(logger.with_subject("").is_err());
    logger.log_on("APP?", Priority::Info, "bad", Vec::new());
    assert_eq!(logger.dropped(), 1);
}

#[test]
fn a_logger_needs_a_runtime() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (server, client) = runtime.block_on(async {
        let server = TestServer::start().await;
        let client = Client::connect(&server.url()).await.unwrap();
        (server, client)
    });
    let made = Logger::new(&client, LoggerOptions::new("APP"));
    assert!(matches!(made, Err(LoggerError::NoRuntime)));
    runtime.block_on(server.stop());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_record_from_many_threads_arrives_in_order_or_is_counted() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 5000;
    let mut s = setup().await;
    let options = LoggerOptions {
        buffer_records: 1024,
        batch_records: 64,
        tick: Duration::from_millis(1),
        ..LoggerOptions::new("APP")
    };
    let logger = Logger::new(&s.client, options).unwrap();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let logger = logger.clone();
            scope.spawn(move || {
                for n in 0..PER_THREAD {
                    logger.info(&format!("{thread} {n}"));
                    if n % 500 == 0 {
                        // Let the background side catch up now and then: some records
                        // should get through, and some be dropped.
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
            });
        }
    });
    logger.flush(WAIT).await.unwrap();
    let dropped = logger.dropped();

    let mut last = [None::<usize>; THREADS];
    let (mut received, mut reported) = (0, 0);
    while received + reported < THREADS * PER_THREAD {
        let record = next(&mut s.subscription).await;
        if record.type_name == DROP_REPORT_TYPE {
            let Some(Value::Int(count)) = field(&record, "dropped") else {
                panic!("report without a count: {record:?}");
            };
            reported += *count as usize;
            continue;
        }
        let (thread, n) = record.text.split_once(' ').unwrap();
        let (thread, n): (usize, usize) = (thread.parse().unwrap(), n.parse().unwrap());
        assert!(
            last[thread] < Some(n),
            "thread {thread}: {n} after {:?}",
            last[thread]
        );
        last[thread] = Some(n);
        received += 1;
    }
    assert_eq!(reported as u64, dropped);
    assert_eq!(received as u64 + dropped, (THREADS * PER_THREAD) as u64);
    assert_eq!(s.subscription.lost(), 0);
    assert_nothing_more(&mut s.subscription).await;
}

#[tokio::test]
async fn a_threshold_message_through_the_server_changes_matching_loggers_only() {
    let setup = setup().await;
    let mount = Logger::new(&setup.client, LoggerOptions::new("APP.ANTENNA.DV01")).unwrap();
    let correlator = Logger::new(&setup.client, LoggerOptions::new("APP.CORRELATOR")).unwrap();
    let operator = Client::connect(&setup.server.url()).await.unwrap();
    let pattern = herald_proto::Glob::new("APP.ANTENNA.*").unwrap();
    let started = Instant::now();
    // The loggers subscribe in the background; repeat the message until it takes effect.
    while mount.threshold() != Priority::Debug {
        let message = herald_client::logger::threshold_message(&pattern, Priority::Debug);
        operator.publish(&message).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            started.elapsed() < WAIT,
            "the threshold message never arrived"
        );
    }
    assert_eq!(
        correlator.threshold(),
        Priority::Info,
        "not matched by the pattern"
    );
    mount.debug("now sent");
    mount.flush(WAIT).await.unwrap();
    let mut subscription = setup.subscription;
    loop {
        let record = next(&mut subscription).await;
        if record.subject == "APP.ANTENNA.DV01" {
            assert_eq!(
                (record.priority, record.text.as_str()),
                (Priority::Debug, "now sent")
            );
            break;
        }
    }
}

#[tokio::test]
async fn identical_records_collapse_before_they_are_sent_and_every_one_is_counted() {
    use herald_proto::storm::{StormRule, REPEATED_FIELD, STORM_FIELD, TOTAL_FIELD};
    let mut s = setup().await;
    let options = LoggerOptions {
        storm: StormRule {
            window_ns: 200_000_000,
            repeats: 3,
        },
        ..LoggerOptions::new("APP.pump")
    };
    let logger = Logger::new(&s.client, options).unwrap();
    for n in 0..1_000 {
        logger.log(
            Priority::Warning,
            "pump 3 cavitating",
            vec![("n".into(), Value::Int(n))],
        );
    }
    logger.warning("pump 3 stopped");
    let handle = logger.clone();
    logger.close(WAIT).await.unwrap();
    let mut records = Vec::new();
    while let Ok(delivered) = s
        .subscription
        .next_record_timeout(Duration::from_millis(500))
        .await
    {
        records.push(delivered.into_record());
    }
    let state = |r: &Record| match field(r, STORM_FIELD) {
        Some(Value::Str(state)) => state.clone(),
        _ => String::new(),
    };
    let count = |r: &Record, name: &str| match field(r, name) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    };
    let plain: Vec<&Record> = records.iter().filter(|r| state(r).is_empty()).collect();
    assert_eq!(plain.len(), 4, "3 before the storm, and the other text");
    assert_eq!(plain[3].text, "pump 3 stopped");
    let marks: Vec<&Record> = records
        .iter()
        .filter(|r| state(r) == "collapsing")
        .collect();
    assert_eq!(marks.len(), 1);
    assert_eq!(field(marks[0], "n"), Some(&Value::Int(3)));
    let held: i64 = records.iter().map(|r| count(r, REPEATED_FIELD)).sum();
    assert_eq!(held, 996, "every record held back is in one summary");
    let last = records.iter().rfind(|r| !state(r).is_empty()).unwrap();
    assert_eq!(state(last), "ended");
    assert_eq!(count(last, TOTAL_FIELD), 996);
    assert_eq!(
        field(last, "n"),
        Some(&Value::Int(999)),
        "the last one held back"
    );
    assert_eq!(handle.dropped(), 0);
}
