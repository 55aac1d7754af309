//! The `tracing` layer: events (with their spans' fields) arrive as Herald records. A
//! subscriber is installed for the thread only (`tracing::subscriber::with_default`), so
//! this file's tests do not disturb each other.

use std::time::Duration;

use herald_client::{Client, Logger, LoggerOptions};
use herald_proto::{Filter, Priority, Record, Value};
use herald_testkit::TestServer;
use tracing_subscriber::layer::SubscriberExt;

const WAIT: Duration = Duration::from_secs(5);

async fn next(subscription: &mut herald_client::Subscription) -> Record {
    subscription
        .next_record_timeout(WAIT)
        .await
        .expect("a record arrives")
        .into_record()
}

#[derive(Debug)]
struct Axis {
    #[allow(dead_code)]
    name: &'static str,
}

#[tokio::test]
async fn tracing_events_arrive_with_span_fields_levels_and_origin() {
    let server = TestServer::start().await;
    let subscriber = Client::connect(&server.url()).await.unwrap();
    let mut records = subscriber
        .subscribe(Filter::subject("TRC*").unwrap())
        .await
        .unwrap();
    let client = Client::connect(&server.url()).await.unwrap();
    let logger = Logger::new(&client, LoggerOptions::new("TRC.app")).unwrap();
    let registry = tracing_subscriber::registry().with(logger.tracing_layer());
    let line = tracing::subscriber::with_default(registry, || {
        let span = tracing::info_span!("move", antenna = "DV01", attempt = 2_u64);
        let _entered = span.enter();
        tracing::warn!(speed = 1.5, stalled = true, axis = ?Axis { name: "az" }, "encoder fault on {}", "az");
        let line = line!() - 1;
        tracing::info!(target: "TRC.explicit", count = -3_i64, "own subject");
        span.record("attempt", 3_u64);
        tracing::error!(attempt = 4_u64, "axis stopped");
        tracing::trace!("below the logger's threshold: gone");
        line
    });
    logger.flush(WAIT).await.unwrap();

    let warning = next(&mut records).await;
    assert_eq!(warning.subject, "TRC.app");
    assert_eq!(warning.priority, Priority::Warning);
    assert_eq!(warning.text, "encoder fault on az");
    assert_eq!(warning.origin.routine, module_path!());
    assert!(warning.origin.file.ends_with("tracing_layer.rs"));
    assert_eq!(warning.origin.line, Some(u64::from(line)));
    assert_eq!(
        warning.fields,
        [
            ("antenna".to_string(), Value::Str("DV01".into())),
            ("attempt".to_string(), Value::Int(2)),
            ("speed".to_string(), Value::Float(1.5)),
            ("stalled".to_string(), Value::Bool(true)),
            (
                "axis".to_string(),
                Value::Str("Axis { name: \"az\" }".into())
            ),
        ]
    );

    let explicit = next(&mut records).await;
    assert_eq!(explicit.subject, "TRC.explicit");
    assert_eq!(explicit.priority, Priority::Info);
    assert!(explicit
        .fields
        .contains(&("count".to_string(), Value::Int(-3))));

    let error = next(&mut records).await;
    assert_eq!(
        (error.priority, error.text.as_str()),
        (Priority::Error, "axis stopped")
    );
    // The span's field recorded again, then the event's own of the same name.
    let attempt: Vec<&Value> = error
        .fields
        .iter()
        .filter(|(name, _)| name == "attempt")
        .map(|(_, value)| value)
        .collect();
    assert_eq!(attempt, [&Value::Int(4)]);

    let more = records
        .next_record_timeout(Duration::from_millis(300))
        .await;
    assert!(more.is_err(), "the TRACE event stays below the threshold");
    assert_eq!(logger.dropped(), 0);
    server.stop().await;
}
