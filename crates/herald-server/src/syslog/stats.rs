//! What the syslog listeners counted, and where they are: the monitor's `syslog` section.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use herald_proto::value::{Field, Value};

/// Bytes of a bad message kept for the monitor.
const SAMPLE_BYTES: usize = 200;

/// What the listeners counted.
#[derive(Debug, Default)]
pub struct SyslogStats {
    /// Where the listeners are: a reload may move them.
    addresses: Mutex<Addresses>,
    /// Messages taken as records.
    pub records: AtomicU64,
    /// Messages refused as bad input.
    pub bad: AtomicU64,
    /// TCP connections ever accepted.
    pub connections: AtomicU64,
    /// TCP connections refused over the connection limits.
    pub refused: AtomicU64,
    /// The last bad message: sender, why, its first bytes.
    last_bad: Mutex<Option<(String, String, String)>>,
}

/// The UDP and TCP addresses listened on.
#[derive(Debug, Default, Clone, Copy)]
pub struct Addresses {
    /// The UDP socket's address.
    pub udp: Option<SocketAddr>,
    /// The TCP listener's address.
    pub tcp: Option<SocketAddr>,
    /// The UDP socket's inode, by which the kernel counts what it dropped for it.
    pub udp_inode: Option<u64>,
}

impl SyslogStats {
    /// Returns where the listeners are.
    pub fn addresses(&self) -> Addresses {
        *self.addresses.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records where the listeners are now.
    pub fn set_addresses(&self, addresses: Addresses) {
        *self.addresses.lock().unwrap_or_else(|p| p.into_inner()) = addresses;
    }

    /// Returns true while a listener runs (the monitor has a `syslog` section).
    pub fn is_on(&self) -> bool {
        let addresses = self.addresses();
        addresses.udp.is_some() || addresses.tcp.is_some()
    }
    /// Counts a bad message from `peer`, keeping it as the sample.
    pub fn bad(&self, peer: &str, why: &str, bytes: &[u8]) {
        self.bad.fetch_add(1, Ordering::Relaxed);
        let sample = String::from_utf8_lossy(&bytes[..bytes.len().min(SAMPLE_BYTES)]);
        let mut last = self.last_bad.lock().unwrap_or_else(|p| p.into_inner());
        *last = Some((peer.to_string(), why.to_string(), sample.into_owned()));
        tracing::debug!(peer, why, "syslog: bad message");
    }

    /// Returns the counters as the monitor's `syslog` section.
    pub fn snapshot(&self) -> Value {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let address =
            |a: Option<SocketAddr>| Value::Str(a.map(|a| a.to_string()).unwrap_or_default());
        let addresses = self.addresses();
        let mut fields: Vec<Field> = vec![
            ("udp".into(), address(addresses.udp)),
            ("tcp".into(), address(addresses.tcp)),
            ("records".into(), int(self.records.load(Ordering::Relaxed))),
            ("bad".into(), int(self.bad.load(Ordering::Relaxed))),
            (
                "connections".into(),
                int(self.connections.load(Ordering::Relaxed)),
            ),
            ("refused".into(), int(self.refused.load(Ordering::Relaxed))),
        ];
        if let Some(drops) = addresses.udp_inode.and_then(udp_drops) {
            fields.push(("udp_dropped".into(), int(drops)));
        }
        let last = self.last_bad.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((peer, why, sample)) = last.as_ref() {
            fields.push((
                "last_bad".into(),
                Value::Map(vec![
                    ("peer".into(), Value::Str(peer.clone())),
                    ("error".into(), Value::Str(why.clone())),
                    ("sample".into(), Value::Str(sample.clone())),
                ]),
            ));
        }
        Value::Map(fields)
    }
}

/// Returns the datagrams the kernel dropped for the UDP socket with inode `inode` (its
/// receive buffer full), from `/proc/net/udp` and `/proc/net/udp6`.
pub fn udp_drops(inode: u64) -> Option<u64> {
    ["/proc/net/udp", "/proc/net/udp6"].iter().find_map(|path| {
        let table = std::fs::read_to_string(path).ok()?;
        table.lines().skip(1).find_map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            let matches = columns.get(9).and_then(|c| c.parse::<u64>().ok()) == Some(inode);
            matches.then(|| columns.last()?.parse().ok()).flatten()
        })
    })
}
