//! The OpenTelemetry target: what `POST /v1/logs` and OTLP/gRPC take from the network — an
//! export request in protobuf or JSON — and the records made of its log records.

use herald_proto::frame::RawRecord;
use herald_proto::Record;
use herald_server::otlp::proto::ExportLogsServiceRequest;
use herald_server::otlp::{json, record};
use prost::Message;

use super::{assert_same, selector};

/// The receiver's clock: the time of log records that have none.
const RECEIVED: i64 = 1_795_752_000_000_000_000;

/// Input: `mode: u8 | body`. Mode even: the body in protobuf — a request that decodes
/// encodes to bytes that decode to the same request. Mode odd: the body in JSON (OTLP's
/// JSON mapping, `otlp::json::request`). Either way, for every log record of a request that
/// reads, the record made of it (`otlp::record::each_record`) either passes the record checks as
/// `RawRecord::from_record` wrote it — the same routing fields as `RawRecord::new` reads,
/// decoding back to itself — or is refused by both.
pub fn otlp_decode(data: &[u8]) {
    let Some((mode, body)) = selector(data) else {
        return;
    };
    let request = if mode % 2 == 0 {
        let Ok(request) = ExportLogsServiceRequest::decode(body) else {
            return;
        };
        let again = ExportLogsServiceRequest::decode(request.encode_to_vec().as_slice())
            .expect("a decoded request encodes to bytes that decode");
        assert_same(&again, &request, "the request encoded and decoded again");
        request
    } else {
        match json::request(body) {
            Ok(request) => request,
            Err(_) => return,
        }
    };
    // The records the server makes of the request, as `POST /v1/logs` makes them.
    record::each_record(&request, RECEIVED, |made| check(&made));
}

/// `made` passes the record checks as `RawRecord::from_record` writes it, or is refused by
/// both ways of checking.
fn check(made: &Record) {
    match RawRecord::from_record(made) {
        Ok(raw) => {
            let scanned = RawRecord::new(raw.bytes.clone())
                .expect("a record from_record passed passes the record checks");
            assert_eq!(
                scanned.meta, raw.meta,
                "from_record's routing fields against the scan's"
            );
            let back = Record::from_bytes(&raw.bytes).expect("a checked record decodes");
            assert_same(&back, made, "the record decoded back");
        }
        Err(_) => {
            let mut bytes = Vec::new();
            made.encode(&mut bytes);
            assert!(
                RawRecord::new(bytes.into()).is_err(),
                "from_record refused a record the checks pass"
            );
        }
    }
}
