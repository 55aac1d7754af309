//! Where the cluster is and how to use it.

use std::time::Duration;

/// How many replicas must acknowledge a write or answer a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CqlConsistency {
    /// One replica.
    One,
    /// A majority of the replicas in the coordinator's data center (one at RF 1).
    #[default]
    LocalQuorum,
    /// A majority of all replicas.
    Quorum,
}

impl CqlConsistency {
    pub(super) fn driver(self) -> scylla::statement::Consistency {
        use scylla::statement::Consistency;
        match self {
            CqlConsistency::One => Consistency::One,
            CqlConsistency::LocalQuorum => Consistency::LocalQuorum,
            CqlConsistency::Quorum => Consistency::Quorum,
        }
    }
}

/// Where the cluster is and how to use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqlOptions {
    /// Nodes to contact first, as `host:port` (`127.0.0.1:9042`); the others are discovered.
    pub contact_points: Vec<String>,
    /// The keyspace holding the archive (letters, digits and `_`; created if missing).
    pub keyspace: String,
    /// Replicas of each row when the keyspace is created (`SimpleStrategy`); an existing
    /// keyspace keeps its own.
    pub replication_factor: u32,
    /// How long one request may take, retries included, before it fails as unavailable.
    pub request_timeout: Duration,
    /// Consistency of reads and writes.
    pub consistency: CqlConsistency,
}

impl Default for CqlOptions {
    fn default() -> Self {
        CqlOptions {
            contact_points: vec!["127.0.0.1:9042".to_string()],
            keyspace: "herald".to_string(),
            replication_factor: 1,
            request_timeout: Duration::from_secs(10),
            consistency: CqlConsistency::default(),
        }
    }
}
