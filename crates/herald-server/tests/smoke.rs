//! The shortest path through the server: publish, subscribe, deliver.

use std::time::Duration;

use herald_client::Client;
use herald_proto::{Filter, Priority};
use herald_testkit::TestServer;

#[tokio::test]
async fn a_log_record_reaches_a_subscriber() {
    let server = TestServer::start().await;
    let subscriber = Client::connect(&server.url()).await.unwrap();
    let mut subscription = subscriber
        .subscribe(Filter::subject("ANTENNA.*").unwrap())
        .await
        .unwrap();
    let publisher = Client::connect(&server.url()).await.unwrap();
    publisher
        .log(Priority::Warning, "ANTENNA.DV01.Mount", "encoder fault")
        .await
        .unwrap();
    let delivered = subscription
        .next_record_timeout(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(delivered.record().text, "encoder fault");
    assert_eq!(delivered.record().priority, Priority::Warning);
    assert!(delivered.seq >= 1);
    server.stop().await;
}
