//! The syslog UDP listener: a datagram is a message, and datagrams are read many to a
//! system call (`recvmmsg`), since one call per datagram costs more than the message's
//! parsing and routing together.

use std::io::IoSliceMut;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, RawFd};

use nix::sys::socket::{recvmmsg, MsgFlags, MultiHeaders, SockaddrStorage};
use tokio::io::Interest;
use tokio::net::UdpSocket;

use super::Ingest;
use crate::shutdown::Shutdown;

/// Datagrams read by one system call at most.
const SLOTS: usize = 64;
/// Datagrams read at most before their records are routed together.
const BATCH: usize = 512;
/// The longest UDP payload (and one byte more).
const LONGEST: usize = 65_536;

/// Reads datagrams until `stop` (a reload, or the server's shutdown), then gives the socket
/// back.
pub async fn listen(
    socket: UdpSocket,
    mut ingest: Ingest,
    max: usize,
    mut stop: Shutdown,
) -> UdpSocket {
    let mut slots = Slots::new(max);
    loop {
        tokio::select! {
            ready = socket.readable() => if let Err(err) = ready {
                tracing::warn!(error = %err, "syslog: UDP receive failed");
                continue;
            },
            () = stop.recv() => return socket,
        }
        // Take what has arrived, then route it all together.
        let mut read = 0;
        while read < BATCH {
            let fd = socket.as_raw_fd();
            match socket.try_io(Interest::READABLE, || slots.receive(fd)) {
                Ok(count) => {
                    read += count;
                    slots.each(|bytes, peer| datagram(&mut ingest, bytes, peer, max));
                }
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(err) => {
                    tracing::warn!(error = %err, "syslog: UDP receive failed");
                    break;
                }
            }
        }
        if ingest.pending() > 0 {
            ingest.flush().await;
        }
    }
}

fn datagram(ingest: &mut Ingest, bytes: &[u8], peer: &str, max: usize) {
    if bytes.len() > max {
        let why = format!("a datagram longer than max_message_bytes ({max})");
        ingest.stats.bad(peer, &why, bytes);
    } else {
        ingest.message(bytes, peer);
    }
}

/// Room for [`SLOTS`] datagrams, and what the last read put there.
struct Slots {
    buffer: Vec<u8>,
    /// Bytes a slot has: one more than a message may have, to tell a message of `max`
    /// from a longer one.
    size: usize,
    /// Each datagram's length and sender.
    received: Vec<(usize, Option<SockaddrStorage>)>,
    /// The last sender, written out: datagrams mostly come in runs from one sender.
    peer: Option<(IpAddr, String)>,
}

impl Slots {
    fn new(max: usize) -> Slots {
        let size = max.saturating_add(1).min(LONGEST);
        Slots {
            // Zeroed by the allocator's fresh pages: a slot costs memory only as far as
            // datagrams have filled it.
            buffer: vec![0; SLOTS * size],
            size,
            received: Vec::with_capacity(SLOTS),
            peer: None,
        }
    }

    /// Reads the datagrams waiting, [`SLOTS`] at most, without waiting; returns how many.
    fn receive(&mut self, fd: RawFd) -> std::io::Result<usize> {
        // Made for each call: the headers hold pointers, which a task may not keep across
        // an await (it would no longer be `Send`); they cost two small allocations.
        let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(SLOTS, None);
        let mut slices: Vec<[IoSliceMut<'_>; 1]> = self
            .buffer
            .chunks_mut(self.size)
            .map(|slot| [IoSliceMut::new(slot)])
            .collect();
        let results = recvmmsg(
            fd,
            &mut headers,
            slices.iter_mut(),
            MsgFlags::MSG_DONTWAIT,
            None,
        )
        .map_err(std::io::Error::from)?;
        self.received.clear();
        self.received
            .extend(results.map(|message| (message.bytes, message.address)));
        Ok(self.received.len())
    }

    /// Calls `found` with each datagram the last [`Slots::receive`] read and its sender.
    fn each(&mut self, mut found: impl FnMut(&[u8], &str)) {
        for (index, &(len, address)) in self.received.iter().enumerate() {
            let ip = address.as_ref().and_then(ip_of);
            let peer = match (&self.peer, ip) {
                (Some((last, name)), Some(ip)) if *last == ip => name.as_str(),
                (_, Some(ip)) => &self.peer.insert((ip, ip.to_string())).1,
                (_, None) => "",
            };
            let start = index * self.size;
            found(&self.buffer[start..start + len.min(self.size)], peer);
        }
    }
}

/// Returns the IP address of `address`, if it is one.
fn ip_of(address: &SockaddrStorage) -> Option<IpAddr> {
    if let Some(v4) = address.as_sockaddr_in() {
        Some(IpAddr::V4(v4.ip()))
    } else {
        address.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
    }
}

/// Returns the inode of `socket`, by which the kernel's `/proc/net/udp` names it.
pub fn socket_inode(socket: &UdpSocket) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/self/fd/{}", socket.as_raw_fd())).ok()?;
    let link = link.to_str()?;
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// Returns the datagrams the kernel dropped for the UDP socket with inode `inode` (its
/// receive buffer full), from `/proc/net/udp` and `/proc/net/udp6`.
pub fn drops(inode: u64) -> Option<u64> {
    ["/proc/net/udp", "/proc/net/udp6"].iter().find_map(|path| {
        let table = std::fs::read_to_string(path).ok()?;
        table.lines().skip(1).find_map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            let matches = columns.get(9).and_then(|c| c.parse::<u64>().ok()) == Some(inode);
            matches.then(|| columns.last()?.parse().ok()).flatten()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn datagrams_are_read_many_at_once_with_their_sender() {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let to = socket.local_addr().unwrap();
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let long = vec![b'x'; 40];
        for message in [&b"one"[..], b"two", &long] {
            sender.send_to(message, to).unwrap();
        }
        let mut slots = Slots::new(32);
        socket.readable().await.unwrap();
        // Loopback delivers at once: the three are there to read.
        let count = slots.receive(socket.as_raw_fd()).unwrap();
        assert_eq!(count, 3);
        let mut seen = Vec::new();
        slots.each(|bytes, peer| seen.push((bytes.to_vec(), peer.to_owned())));
        assert_eq!(seen[0], (b"one".to_vec(), "127.0.0.1".to_owned()));
        assert_eq!(seen[1].0, b"two");
        // Longer than `max`: read as `max + 1` bytes, which the listener refuses as too long.
        assert_eq!(seen[2].0.len(), 33);
        let err = slots.receive(socket.as_raw_fd()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
    }
}
