//! `syslog`: messages into the server's syslog listeners, as a device or a host's syslog
//! daemon would send them, `size` bytes of text, then the same count published natively:
//!
//! - `udp`: RFC 5424 datagrams, 64 given to the kernel at once (`UDP_SEGMENT`), which the
//!   listener receives as runs (receive offload);
//! - `udp-single`: RFC 5424, one datagram a message through the kernel's path on its own,
//!   as most syslog senders send;
//! - `tcp`: RFC 5424, one connection, octet-counted frames written in large chunks;
//! - `tcp-3164`: RFC 3164 lines (`<PRI>Mmm dd hh:mm:ss host app[pid]: text`), newline
//!   framed, as a BSD syslog daemon forwards them;
//! - `native`: `herald bench pub`'s publisher into the same server.
//!
//! The rate is messages the server took as records per second, from the first send until
//! the monitor's `syslog.records` stops growing (`native`: until the publisher's flush);
//! UDP datagrams the kernel dropped (its receive buffer full) are what was sent and never
//! counted. When the server runs in this process, each line also gives the server's CPU
//! time per million messages ([`crate::cpu`]): where one sender cannot keep the
//! listener busy (`udp-single` on a small machine), that is what says how much it could take.
//! UDP lines give the sender's CPU time a message too: on loopback the kernel's whole path,
//! sending and receiving up to the listener's socket, runs in the sender's system calls.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use herald_client::Client;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::report::Report;

/// How long the count may stand still before the run ends.
const SETTLE: Duration = Duration::from_millis(500);
/// Datagrams sent by one system call. One call per datagram (4–5 µs on this VM, most of it
/// the kernel's UDP path, and `sendmmsg` saves little of it) caps one sender near
/// 200–250k datagrams/s, below what the listener takes.
const UDP_BATCH: usize = 64;
/// Bytes of frames written to TCP at once.
const TCP_CHUNK: usize = 256 * 1024;

/// How messages go to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Udp,
    UdpSingle,
    Tcp,
    Tcp3164,
}

impl Transport {
    const ALL: [Transport; 4] = [
        Transport::Udp,
        Transport::UdpSingle,
        Transport::Tcp,
        Transport::Tcp3164,
    ];

    fn name(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::UdpSingle => "udp-single",
            Transport::Tcp => "tcp",
            Transport::Tcp3164 => "tcp-3164",
        }
    }

    fn is_udp(self) -> bool {
        matches!(self, Transport::Udp | Transport::UdpSingle)
    }
}

/// Returns the message with sequence number `i`, `size` bytes of text: RFC 5424 without a
/// MSGID, or RFC 3164. Each text is its own: no two messages are a storm (a MSGID is the
/// record's log id, and 11 records of one log id in 10 s would be collapsed into one and a
/// count).
fn message(i: u64, size: usize, rfc5424: bool) -> Vec<u8> {
    let head: &[u8] = if rfc5424 {
        b"<14>1 2026-11-27T04:00:00.000000Z dv01 bench 4242 - - "
    } else {
        b"<14>Nov 27 04:00:00 dv01 bench[4242]: "
    };
    let mut line = head.to_vec();
    let text = format!("message {i} ");
    line.extend(text.bytes().chain(std::iter::repeat(b'x')).take(size));
    line
}

/// The monitor's `syslog` counter `name`.
async fn counter(client: &Client, name: &str) -> anyhow::Result<u64> {
    let absent = "no syslog listener: [syslog] udp/tcp";
    crate::herald::section_counter(client, "syslog", name, absent).await
}

/// The server's CPU seconds so far, when it runs in this process.
fn server_cpu(own_server: bool) -> Option<f64> {
    own_server.then(crate::cpu::server_seconds).flatten()
}

/// CPU seconds per million messages, and its text for a line.
fn cpu_per_million(before: Option<f64>, after: Option<f64>, count: u64) -> (Option<f64>, String) {
    match (before, after) {
        (Some(before), Some(after)) if count > 0 => {
            let per = (after - before) / (count as f64 / 1e6);
            (Some(per), format!("; server CPU {per:.2} s per million"))
        }
        _ => (None, String::new()),
    }
}

/// Sends `records` messages of `size` bytes of text over each transport to `udp` and
/// `tcp`, one after the other, then publishes as many natively, and reports the rates (and,
/// with `own_server`, the server's CPU time). `udp_rate` paces the UDP sender (else it
/// sends as fast as it can, and what the listener cannot take the kernel drops).
///
/// # Errors
/// The server cannot be reached or has no syslog listener.
pub async fn syslog(
    url: &str,
    (udp, tcp): (SocketAddr, SocketAddr),
    records: u64,
    size: usize,
    udp_rate: Option<f64>,
    own_server: bool,
) -> anyhow::Result<Report> {
    let client = Client::connect(url).await?;
    let mut lines = Vec::new();
    let mut json = serde_json::Map::new();
    let mut rates = Vec::new();
    for transport in Transport::ALL {
        let run = run(
            &client,
            transport,
            (udp, tcp),
            records,
            size,
            udp_rate,
            own_server,
        )
        .await?;
        lines.push(run.line);
        json.insert(transport.name().into(), run.json);
        rates.push((transport.name(), run.rate, run.cpu));
    }
    // Native publish into the same server, as `herald bench pub`: what the front doors
    // are measured against.
    let herald = crate::herald::Herald {
        url: url.to_string(),
        subscriber_url: None,
    };
    let cpu_before = server_cpu(own_server);
    let native = crate::scenarios::publish_only(&herald, records, size).await?;
    let native_rate = native.json["messages_per_second"].as_f64().unwrap_or(0.0);
    let (native_cpu, cpu_text) = cpu_per_million(cpu_before, server_cpu(own_server), records);
    lines.push(format!(
        "native publish: {records} records ({size} B of text): {native_rate:.0} records/s{cpu_text}"
    ));
    json.insert(
        "native".into(),
        json!({"records": records, "rate": native_rate, "server_cpu_per_million": native_cpu}),
    );
    let ratios: Vec<String> = rates
        .iter()
        .map(|(name, rate, cpu)| {
            let by_cpu = match (cpu, native_cpu) {
                (Some(cpu), Some(native)) if *cpu > 0.0 => {
                    format!(" (by server CPU a message {:.2}×)", native / cpu)
                }
                _ => String::new(),
            };
            format!("{name} {:.2}×{by_cpu}", rate / native_rate)
        })
        .collect();
    lines.push(format!(
        "syslog against native publish: {}",
        ratios.join(", ")
    ));
    Ok(Report {
        lines,
        json: json!({"scenario": "syslog", "size": size, "results": json}),
    })
}

/// What one transport's run measured: its line and JSON, the rate, the server's CPU
/// seconds per million messages.
struct Run {
    line: String,
    json: serde_json::Value,
    rate: f64,
    cpu: Option<f64>,
}

/// Sends `records` messages over `transport` and measures how fast the server takes them.
async fn run(
    client: &Client,
    transport: Transport,
    (udp, tcp): (SocketAddr, SocketAddr),
    records: u64,
    size: usize,
    udp_rate: Option<f64>,
    own_server: bool,
) -> anyhow::Result<Run> {
    let before = counter(client, "records").await?;
    let bad_before = counter(client, "bad").await?;
    // The kernel's count for the UDP socket (Linux), when the server can read it.
    let kernel_before = counter(client, "udp_dropped").await.ok();
    // Made before the clock starts: what is measured is the server, not the sender's
    // formatting.
    let rfc5424 = transport != Transport::Tcp3164;
    let messages: Vec<Vec<u8>> = (0..records).map(|i| message(i, size, rfc5424)).collect();
    let cpu_before = server_cpu(own_server);
    let started = Instant::now();
    // The UDP sender's CPU time: on loopback it also pays for the kernel's receiving.
    let sender_cpu = match transport {
        Transport::Udp => send_udp(udp, messages, udp_rate, true).await?,
        Transport::UdpSingle => send_udp(udp, messages, udp_rate, false).await?,
        Transport::Tcp => send_tcp(tcp, &messages, true).await.map(|()| None)?,
        Transport::Tcp3164 => send_tcp(tcp, &messages, false).await.map(|()| None)?,
    };
    let sender_text = match sender_cpu {
        Some(seconds) => format!(
            "; the sender's CPU {:.2} µs a message",
            seconds / records as f64 * 1e6
        ),
        None => String::new(),
    };
    let sent = started.elapsed();
    // Until every message is counted, or the count stands still.
    let (mut taken, mut last_change) = (0, Instant::now());
    while taken < records {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let now = counter(client, "records").await? - before;
        if now != taken {
            (taken, last_change) = (now, Instant::now());
        } else if last_change.elapsed() > SETTLE {
            break;
        }
    }
    let elapsed = if taken == records {
        started.elapsed()
    } else {
        last_change.duration_since(started)
    };
    let (cpu, cpu_text) = cpu_per_million(cpu_before, server_cpu(own_server), taken);
    let bad = counter(client, "bad").await? - bad_before;
    let is_udp = transport.is_udp();
    let kernel = match (kernel_before, counter(client, "udp_dropped").await.ok()) {
        (Some(before), Some(after)) if is_udp => Some(after - before),
        _ => None,
    };
    let rate = taken as f64 / elapsed.as_secs_f64();
    let lost = records - taken.min(records);
    let name = transport.name();
    let line = format!(
        "syslog {name}: {taken} of {records} messages ({size} B of text) taken in {:.3} s: {rate:.0} records/s (sent in {:.3} s{}; {lost} not taken{}, {bad} bad{cpu_text}{sender_text})",
        elapsed.as_secs_f64(),
        sent.as_secs_f64(),
        match udp_rate.filter(|_| is_udp) {
            Some(pace) => format!(", paced at {pace:.0}/s"),
            None => String::new(),
        },
        match kernel {
            Some(n) => format!("; the kernel counted {n} packets dropped (a datagram each, or a run), its receive buffer full"),
            None => String::new(),
        },
    );
    let json = json!({"records": records, "taken": taken,
               "paced": udp_rate.filter(|_| is_udp), "rate": rate, "lost": lost, "bad": bad,
               "kernel_dropped": kernel, "seconds": elapsed.as_secs_f64(),
               "server_cpu_per_million": cpu, "sender_cpu_seconds": sender_cpu});
    Ok(Run {
        line,
        json,
        rate,
        cpu,
    })
}

/// Sends each message as one datagram from a thread of its own, [`UDP_BATCH`] to a
/// blocking system call: with `segmented` and messages all of one length, with UDP
/// segmentation offload (one buffer of datagrams of one size, as QUIC stacks send), which
/// loopback hands to a listener with receive offload as that one run; else with
/// `sendmmsg`, each datagram through the kernel's path on its own.
async fn send_udp(
    to: SocketAddr,
    messages: Vec<Vec<u8>>,
    rate: Option<f64>,
    segmented: bool,
) -> anyhow::Result<Option<f64>> {
    tokio::task::spawn_blocking(move || -> anyhow::Result<Option<f64>> {
        let cpu = crate::cpu::thread_seconds();
        let mut pace = Pace::new(rate);
        let socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
        socket.connect(to)?;
        let length = messages.first().map_or(0, Vec::len);
        let one_length = messages.iter().all(|m| m.len() == length);
        match u16::try_from(length) {
            Ok(segment) if segmented && one_length && length * UDP_BATCH <= 65_000 => {
                send_segmented(&socket, &messages, segment, &mut pace)
            }
            _ => send_many(&socket, &messages, &mut pace),
        }?;
        Ok(cpu
            .zip(crate::cpu::thread_seconds())
            .map(|(before, after)| after - before))
    })
    .await?
}

/// Sends `messages`, each of `segment` bytes, [`UDP_BATCH`] to a buffer that the kernel
/// cuts into datagrams (`UDP_SEGMENT`).
fn send_segmented(
    socket: &std::net::UdpSocket,
    messages: &[Vec<u8>],
    segment: u16,
    pace: &mut Pace,
) -> anyhow::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, SockaddrStorage};
    use std::io::IoSlice;
    use std::os::fd::AsRawFd;
    let mut buffer = Vec::with_capacity(usize::from(segment) * UDP_BATCH);
    for batch in messages.chunks(UDP_BATCH) {
        pace.wait(batch.len());
        buffer.clear();
        batch.iter().for_each(|m| buffer.extend_from_slice(m));
        let control = [ControlMessage::UdpGsoSegments(&segment)];
        // Connected: no address. A datagram socket sends a buffer whole or not at all.
        sendmsg::<SockaddrStorage>(
            socket.as_raw_fd(),
            &[IoSlice::new(&buffer)],
            &control,
            MsgFlags::empty(),
            None,
        )
        .map_err(std::io::Error::from)?;
    }
    Ok(())
}

/// Sends `messages`, [`UDP_BATCH`] datagrams to a `sendmmsg` call.
fn send_many(
    socket: &std::net::UdpSocket,
    messages: &[Vec<u8>],
    pace: &mut Pace,
) -> anyhow::Result<()> {
    use nix::sys::socket::{sendmmsg, MsgFlags, MultiHeaders, SockaddrStorage};
    use std::io::IoSlice;
    use std::os::fd::AsRawFd;
    // Connected: no address per datagram.
    let addresses: Vec<Option<SockaddrStorage>> = vec![None; UDP_BATCH];
    for batch in messages.chunks(UDP_BATCH) {
        pace.wait(batch.len());
        let mut sent = 0;
        // A call may send fewer than asked (the socket's send buffer full): the rest goes
        // again.
        while sent < batch.len() {
            let slices: Vec<[IoSlice<'_>; 1]> =
                batch[sent..].iter().map(|m| [IoSlice::new(m)]).collect();
            let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(slices.len(), None);
            let results = sendmmsg(
                socket.as_raw_fd(),
                &mut headers,
                &slices,
                &addresses[..slices.len()],
                [],
                MsgFlags::empty(),
            )
            .map_err(std::io::Error::from)?;
            sent += results.count();
        }
    }
    Ok(())
}

/// Keeps a sender at a rate: before each batch, waits until the messages sent so far are
/// due.
struct Pace {
    rate: Option<f64>,
    started: Instant,
    sent: u64,
}

impl Pace {
    fn new(rate: Option<f64>) -> Pace {
        Pace {
            rate,
            started: Instant::now(),
            sent: 0,
        }
    }

    /// Waits until `count` more messages may go.
    fn wait(&mut self, count: usize) {
        if let Some(rate) = self.rate {
            let due = self.started + Duration::from_secs_f64(self.sent as f64 / rate);
            if let Some(ahead) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(ahead);
            }
        }
        self.sent += count as u64;
    }
}

/// Sends `messages` over one connection, octet-counted (`LEN SP MSG`) or one a line.
async fn send_tcp(to: SocketAddr, messages: &[Vec<u8>], counted: bool) -> anyhow::Result<()> {
    let mut stream = tokio::net::TcpStream::connect(to).await?;
    let mut chunk = Vec::with_capacity(TCP_CHUNK + 4096);
    for line in messages {
        if counted {
            chunk.extend_from_slice(format!("{} ", line.len()).as_bytes());
        }
        chunk.extend_from_slice(line);
        if !counted {
            chunk.push(b'\n');
        }
        if chunk.len() >= TCP_CHUNK {
            stream.write_all(&chunk).await?;
            chunk.clear();
        }
    }
    stream.write_all(&chunk).await?;
    stream.shutdown().await?;
    Ok(())
}
