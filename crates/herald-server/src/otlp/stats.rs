//! What OpenTelemetry logs in counted (`/v1/logs` and the gRPC port): the monitor's `otlp`
//! section.

use std::sync::atomic::{AtomicU64, Ordering};

use herald_proto::value::{Field, Value};

/// What `/v1/logs` counted.
#[derive(Debug, Default)]
pub struct OtlpStats {
    /// Export requests answered (both transports).
    pub requests: AtomicU64,
    /// Of those, the ones over gRPC.
    pub grpc_requests: AtomicU64,
    /// Log records taken.
    pub records: AtomicU64,
    /// Log records rejected (reported in `partial_success`).
    pub rejected: AtomicU64,
}

impl OtlpStats {
    /// Returns the counters as the monitor's `otlp` section, once a request came.
    pub fn snapshot(&self) -> Option<Value> {
        let requests = self.requests.load(Ordering::Relaxed);
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        (requests > 0).then(|| {
            let fields: Vec<Field> = vec![
                ("requests".into(), int(requests)),
                (
                    "grpc_requests".into(),
                    int(self.grpc_requests.load(Ordering::Relaxed)),
                ),
                ("records".into(), int(self.records.load(Ordering::Relaxed))),
                (
                    "rejected".into(),
                    int(self.rejected.load(Ordering::Relaxed)),
                ),
            ];
            Value::Map(fields)
        })
    }
}
