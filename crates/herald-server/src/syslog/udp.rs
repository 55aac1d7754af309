//! The syslog UDP listener: a datagram is a message, and datagrams are read many to a
//! system call (`recvmmsg`), since one call per datagram costs more than the message's
//! parsing and routing together. The socket asks for UDP receive offload (`UDP_GRO`,
//! Linux 5.0 and later): the kernel may then hand over a run of datagrams of one size from
//! one sender as one buffer with their size (loopback passes on those a sender gave as one
//! buffer with `UDP_SEGMENT`; over a network the kernel's GRO may gather a busy sender's,
//! not measured here), and the listener cuts it into the datagrams it was; the kernel's work
//! per datagram is then mostly saved. A read that leaves slots empty is routed before the
//! next read is asked for.

use std::io::IoSliceMut;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, RawFd};

use nix::sys::socket::{
    recvmmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags, MultiHeaders, SockaddrStorage,
};
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
    // Refused by a kernel without it: datagrams then come one by one, as before.
    let offload = setsockopt(&socket, sockopt::UdpGroSegment, &true).is_ok();
    let mut slots = Slots::new(max, offload);
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
                    // Slots left empty: the socket had no more. What was read is routed
                    // before asking again, and what comes meanwhile is then read many to
                    // a call; asking at once, while datagrams trickle in, read one or two
                    // a call (0.7 calls a datagram from one `sendmmsg` sender).
                    if !slots.filled() {
                        break;
                    }
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

/// Room for [`SLOTS`] datagrams (or runs of them, with offload), and what the last read put
/// there.
struct Slots {
    buffer: Vec<u8>,
    /// Bytes a slot has: one more than a message may have, to tell a message of `max`
    /// from a longer one; with offload, the longest run the kernel hands over.
    size: usize,
    /// Whether the socket has receive offload: a slot may hold a run of datagrams.
    offload: bool,
    /// Each slot's length, sender, and the size of the datagrams of its run (`None`: one
    /// datagram).
    received: Vec<(usize, Option<SockaddrStorage>, Option<usize>)>,
    /// The last sender, written out: datagrams mostly come in runs from one sender.
    peer: Option<(IpAddr, String)>,
}

impl Slots {
    fn new(max: usize, offload: bool) -> Slots {
        let size = match offload {
            true => LONGEST,
            false => max.saturating_add(1).min(LONGEST),
        };
        Slots {
            // Zeroed by the allocator's fresh pages: a slot costs memory only as far as
            // datagrams have filled it.
            buffer: vec![0; SLOTS * size],
            size,
            offload,
            received: Vec::with_capacity(SLOTS),
            peer: None,
        }
    }

    /// Reads the datagrams waiting, [`SLOTS`] slots at most, without waiting; returns how
    /// many datagrams.
    fn receive(&mut self, fd: RawFd) -> std::io::Result<usize> {
        // Made for each call: the headers hold pointers, which a task may not keep across
        // an await (it would no longer be `Send`); they cost a few small allocations.
        let control = self.offload.then(|| nix::cmsg_space!(i32));
        let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(SLOTS, control);
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
        let mut datagrams = 0;
        for message in results {
            let run = message.cmsgs().ok().and_then(|mut all| {
                all.find_map(|control| match control {
                    ControlMessageOwned::UdpGroSegments(size) => usize::try_from(size).ok(),
                    _ => None,
                })
            });
            let run = run.filter(|&size| size > 0 && size < message.bytes);
            datagrams += run.map_or(1, |size| message.bytes.div_ceil(size));
            self.received.push((message.bytes, message.address, run));
        }
        Ok(datagrams)
    }

    /// Returns true when the last [`Slots::receive`] filled every slot (more may wait).
    fn filled(&self) -> bool {
        self.received.len() == SLOTS
    }

    /// Calls `found` with each datagram the last [`Slots::receive`] read and its sender.
    fn each(&mut self, mut found: impl FnMut(&[u8], &str)) {
        for (index, &(len, address, run)) in self.received.iter().enumerate() {
            let ip = address.as_ref().and_then(ip_of);
            let peer = match (&self.peer, ip) {
                (Some((last, name)), Some(ip)) if *last == ip => name.as_str(),
                (_, Some(ip)) => &self.peer.insert((ip, ip.to_string())).1,
                (_, None) => "",
            };
            let start = index * self.size;
            let slot = &self.buffer[start..start + len.min(self.size)];
            match run {
                // The datagrams of a run, each of `size` bytes but the last.
                Some(size) => slot.chunks(size).for_each(|datagram| found(datagram, peer)),
                None => found(slot, peer),
            }
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
        let mut slots = Slots::new(32, false);
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

    #[tokio::test]
    async fn a_run_of_datagrams_given_as_one_buffer_is_read_as_the_datagrams_it_was() {
        use nix::sys::socket::{sendmsg, ControlMessage};
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let offload = setsockopt(&socket, sockopt::UdpGroSegment, &true).is_ok();
        let to = socket.local_addr().unwrap();
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sender.connect(to).unwrap();
        // Ten datagrams of 20 bytes and a last one of 7, given to the kernel as one buffer.
        let mut buffer = Vec::new();
        for n in 0..10u8 {
            buffer.extend(std::iter::repeat_n(b'a' + n, 20));
        }
        buffer.extend_from_slice(b"the end");
        let segment: u16 = 20;
        sendmsg::<SockaddrStorage>(
            sender.as_raw_fd(),
            &[std::io::IoSlice::new(&buffer)],
            &[ControlMessage::UdpGsoSegments(&segment)],
            MsgFlags::empty(),
            None,
        )
        .unwrap();
        let mut slots = Slots::new(64, offload);
        let mut seen: Vec<Vec<u8>> = Vec::new();
        while seen.len() < 11 {
            let wait = std::time::Duration::from_secs(5);
            let ready = tokio::time::timeout(wait, socket.readable()).await;
            ready.expect("the datagrams come").unwrap();
            let Ok(count) = slots.receive(socket.as_raw_fd()) else {
                continue;
            };
            let before = seen.len();
            slots.each(|bytes, peer| {
                assert_eq!(peer, "127.0.0.1");
                seen.push(bytes.to_vec());
            });
            assert_eq!(seen.len() - before, count, "receive counts datagrams");
        }
        for (n, datagram) in seen[..10].iter().enumerate() {
            assert_eq!(datagram, &vec![b'a' + n as u8; 20]);
        }
        assert_eq!(seen[10], b"the end");
        if offload {
            // The kernel handed the run over whole: one slot held all eleven.
            assert_eq!(slots.received.len(), 1);
        }
    }
}
