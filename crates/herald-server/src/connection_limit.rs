//! [`ConnectionLimit`]: how many connections may be open at once, in all and from one IP
//! address. The native listener and the HTTP front door each have one; a connection holds
//! a [`ConnectionPermit`] for its life. A reload may change the limits; connections already
//! open stay open.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Counts open connections against a total and a per-address limit.
#[derive(Debug)]
pub struct ConnectionLimit {
    max_total: AtomicUsize,
    max_per_address: AtomicUsize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// Why a connection was turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The total limit is reached.
    Total(usize),
    /// This address has its limit of connections open.
    Address(IpAddr, usize),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Total(limit) => write!(f, "too many connections (limit {limit})"),
            Refusal::Address(ip, limit) => write!(
                f,
                "too many connections from {ip} (limit {limit} per address)"
            ),
        }
    }
}

/// One open connection; dropping it frees its place.
#[derive(Debug)]
pub struct ConnectionPermit {
    limit: Arc<ConnectionLimit>,
    ip: IpAddr,
}

impl ConnectionLimit {
    /// A limit of `max_total` connections, `max_per_address` of them from one address.
    pub fn new(max_total: usize, max_per_address: usize) -> Arc<ConnectionLimit> {
        Arc::new(ConnectionLimit {
            max_total: AtomicUsize::new(max_total),
            max_per_address: AtomicUsize::new(max_per_address),
            open: Mutex::new(Open::default()),
        })
    }

    /// Sets new limits for the connections that come next.
    pub fn set_limits(&self, max_total: usize, max_per_address: usize) {
        self.max_total.store(max_total, Ordering::Relaxed);
        self.max_per_address
            .store(max_per_address, Ordering::Relaxed);
    }

    /// Takes a place for a connection from `ip`.
    ///
    /// # Errors
    /// [`Refusal`] saying which limit is reached.
    pub fn try_acquire(self: &Arc<Self>, ip: IpAddr) -> Result<ConnectionPermit, Refusal> {
        let max_total = self.max_total.load(Ordering::Relaxed);
        let max_per_address = self.max_per_address.load(Ordering::Relaxed);
        let mut open = self.lock();
        if open.total >= max_total {
            return Err(Refusal::Total(max_total));
        }
        let from_ip = open.by_address.entry(ip).or_insert(0);
        if *from_ip >= max_per_address {
            return Err(Refusal::Address(ip, max_per_address));
        }
        *from_ip += 1;
        open.total += 1;
        Ok(ConnectionPermit {
            limit: Arc::clone(self),
            ip,
        })
    }

    /// Returns how many connections are open.
    pub fn open(&self) -> usize {
        self.lock().total
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for ConnectionPermit {
    fn drop(&mut self) {
        let mut open = self.limit.lock();
        open.total -= 1;
        if let Some(count) = open.by_address.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.by_address.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_in_all_and_per_address_and_frees_on_drop() {
        let limit = ConnectionLimit::new(3, 2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = limit.try_acquire(a).unwrap();
        let _second = limit.try_acquire(a).unwrap();
        let refusal = limit.try_acquire(a).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "too many connections from 10.0.0.1 (limit 2 per address)"
        );
        let _third = limit.try_acquire(b).unwrap();
        assert_eq!(limit.try_acquire(b).unwrap_err(), Refusal::Total(3));
        drop(first);
        assert_eq!(limit.open(), 2);
        assert!(limit.try_acquire(a).is_ok());
    }
}
