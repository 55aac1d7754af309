//! The conformance suite on the embedded SQLite store.

use std::sync::Arc;

use herald_archive::conformance::Harness;
use herald_archive::{Backend, EmbeddedBackend};

struct Embedded(tempfile::TempDir);

impl Harness for Embedded {
    fn open(&self) -> Arc<dyn Backend> {
        Arc::new(EmbeddedBackend::open(self.0.path()))
    }
}

fn harness() -> Embedded {
    Embedded(tempfile::tempdir().expect("a temporary directory"))
}

herald_archive::conformance_tests!(harness());
