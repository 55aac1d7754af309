//! `herald serve` prints where it serves HTTP, and the CLI and the HTTP API show an object
//! in the same JSON and the same XML.

use std::process::{Command, Stdio};

use herald_proto::info::{AttributeData, TypeData};
use herald_testkit::http::request;
use herald_testkit::ServeProcess;

const HERALD: &str = env!("CARGO_BIN_EXE_herald");

#[test]
fn cli_and_http_show_an_object_in_one_json_and_one_xml_form() {
    let server = ServeProcess::start(HERALD, &[]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = herald_client::Client::connect(&server.url()).await.unwrap();
        let run_info = TypeData {
            name: "RunInfo".into(),
            base: None,
            description: String::new(),
            attributes: vec![AttributeData {
                name: "run".into(),
                attr_type: "u32".into(),
                description: "run <number>".into(),
            }],
        };
        client.declare_type(run_info).await.unwrap();
    });
    let herald = |args: &[&str]| {
        let output = Command::new(HERALD)
            .args(args)
            .args(["--server", &server.url()])
            .stderr(Stdio::inherit())
            .output()
            .expect("herald runs");
        assert!(output.status.success(), "{args:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    herald(&["set", "RunParams.RunInfo", "RunInfo", "run=42"]);
    let http = server.http_addr.parse().unwrap();
    let (json, xml) = runtime.block_on(async {
        let json = request(http, "GET", "/info/RunParams.RunInfo", None).await;
        let xml = request(http, "GET", "/info/RunParams.RunInfo?format=xml", None).await;
        (json, xml)
    });
    assert_eq!((json.status, xml.status), (200, 200));
    assert_eq!(
        herald(&["get", "RunParams.RunInfo", "--json"]),
        json.body + "\n"
    );
    assert_eq!(herald(&["get", "RunParams.RunInfo", "--xml"]), xml.body);
    assert!(xml
        .body
        .contains(r#"<attr name="run" descr="run &lt;number&gt;" type="u32"><v>42</v></attr>"#));
}
