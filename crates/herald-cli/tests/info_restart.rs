//! Information objects survive a server killed with SIGKILL right after it acknowledged
//! an update: a real `herald serve` process, killed, and a new one on the same data.

use herald_client::Client;
use herald_proto::info::{AttributeData, TypeData, UpdateMode};
use herald_proto::Value;
use herald_testkit::ServeProcess;

const HERALD: &str = env!("CARGO_BIN_EXE_herald");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledged_update_survives_sigkill() {
    let mut first = ServeProcess::start(HERALD, &[]);
    let client = Client::connect(&first.url()).await.unwrap();
    let attribute = AttributeData {
        name: "run".into(),
        attr_type: "u32".into(),
        description: "run number".into(),
    };
    let run_info = TypeData {
        name: "RunInfo".into(),
        base: None,
        description: String::new(),
        attributes: vec![attribute],
    };
    client.declare_type(run_info.clone()).await.unwrap();
    let mut last = None;
    for run in 1..=200 {
        let fields = vec![("run".to_string(), Value::Int(run))];
        last = Some(
            client
                .set_info(
                    "RunParams.RunInfo",
                    Some("RunInfo"),
                    fields,
                    UpdateMode::Upsert,
                )
                .await
                .unwrap(),
        );
    }
    // Killed the moment the last update was acknowledged: no goodbye, no flush.
    first.kill();
    let acknowledged = last.unwrap();
    assert_eq!(acknowledged.version, 200);

    let second = ServeProcess::start_in(HERALD, &first.data_dir, &[], &[]);
    let client = Client::connect(&second.url()).await.unwrap();
    assert_eq!(
        client.get_info("RunParams.RunInfo").await.unwrap(),
        Some(acknowledged)
    );
    assert_eq!(client.info_types().await.unwrap(), [run_info]);
}
