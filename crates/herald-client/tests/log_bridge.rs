//! The `log` crate facade. `log::set_logger` is process-wide, so this file holds one test.

use std::time::Duration;

use herald_client::logger::{install_log, FLIGHT_RECORDER_FIELD};
use herald_client::{Client, Logger, LoggerOptions};
use herald_proto::{Filter, Priority, Record, Value};
use herald_testkit::TestServer;

const WAIT: Duration = Duration::from_secs(5);

async fn next(subscription: &mut herald_client::Subscription) -> Record {
    subscription
        .next_record_timeout(WAIT)
        .await
        .expect("a record arrives")
        .into_record()
}

#[tokio::test]
async fn log_macros_arrive_as_herald_records() {
    let server = TestServer::start().await;
    let subscriber = Client::connect(&server.url()).await.unwrap();
    let mut subscription = subscriber
        .subscribe(Filter::subject("APP*").unwrap())
        .await
        .unwrap();
    let client = Client::connect(&server.url()).await.unwrap();
    let logger = Logger::new(&client, LoggerOptions::new("APP.bridge")).unwrap();
    install_log(logger.clone(), log::LevelFilter::Debug).unwrap();

    log::warn!("encoder fault on axis {}", "az");
    let line = line!() - 1;
    log::info!(target: "APP.explicit", "on a subject of its own");
    log::debug!("kept by the flight recorder");
    log::trace!("above the bridge's maximum level: gone");
    log::error!("axis stopped");
    logger.flush(WAIT).await.unwrap();

    let warning = next(&mut subscription).await;
    assert_eq!(warning.subject, "APP.bridge");
    assert_eq!(warning.priority, Priority::Warning);
    assert_eq!(warning.text, "encoder fault on axis az");
    assert_eq!(warning.origin.routine, module_path!());
    assert!(warning.origin.file.ends_with("log_bridge.rs"));
    assert_eq!(warning.origin.line, Some(u64::from(line)));

    let explicit = next(&mut subscription).await;
    assert_eq!(explicit.subject, "APP.explicit");
    assert_eq!(explicit.priority, Priority::Info);

    let context = next(&mut subscription).await;
    assert_eq!(context.text, "kept by the flight recorder");
    assert_eq!(context.priority, Priority::Debug);
    let mark = (FLIGHT_RECORDER_FIELD.to_string(), Value::Bool(true));
    assert_eq!(context.fields, [mark]);

    let error = next(&mut subscription).await;
    assert_eq!(
        (error.priority, error.text.as_str()),
        (Priority::Error, "axis stopped")
    );
    let more = subscription
        .next_record_timeout(Duration::from_millis(300))
        .await;
    assert!(more.is_err());
    assert_eq!(logger.dropped(), 0);
    server.stop().await;
}
