//! `syslog`: messages into the server's syslog listeners, as a device or a host's syslog
//! daemon would send them — RFC 5424, `size` bytes of text — over UDP (a datagram each)
//! and over TCP (one connection, octet-counted frames written in large chunks). The rate is
//! messages the server took as records per second, from the first send until the monitor's
//! `syslog.records` stops growing; UDP datagrams the kernel dropped (its receive buffer
//! full) are what was sent and never counted.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use herald_client::Client;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::report::Report;

/// How long the count may stand still before the run ends.
const SETTLE: Duration = Duration::from_millis(500);
/// Threads sending datagrams at once. One: on a 2-core machine a second sender takes the
/// listener's core (1M messages, two senders: 122–155k records/s taken, a quarter to a half
/// dropped by the kernel; one sender: 187–225k/s, none or 0.6 % dropped).
const UDP_SENDERS: usize = 1;
/// Bytes of frames written to TCP at once.
const TCP_CHUNK: usize = 256 * 1024;

/// Returns the message with sequence number `i`: RFC 5424, `size` bytes of text.
fn message(i: u64, size: usize) -> Vec<u8> {
    let mut line = format!(
        "<14>1 2026-11-27T04:00:00.000000Z dv01 bench 4242 M{} - ",
        i % 100
    )
    .into_bytes();
    let text = format!("message {i} ");
    line.extend(text.bytes().chain(std::iter::repeat(b'x')).take(size));
    line
}

/// The monitor's `syslog` counter `name`.
async fn counter(client: &Client, name: &str) -> anyhow::Result<u64> {
    let absent = "no syslog listener: [syslog] udp/tcp";
    crate::herald::section_counter(client, "syslog", name, absent).await
}

/// Sends `records` messages of `size` bytes of text over UDP to `udp` and over TCP to
/// `tcp`, one after the other, and reports the rates.
///
/// # Errors
/// The server cannot be reached or has no syslog listener.
pub async fn syslog(
    url: &str,
    udp: SocketAddr,
    tcp: SocketAddr,
    records: u64,
    size: usize,
) -> anyhow::Result<Report> {
    let client = Client::connect(url).await?;
    let mut lines = Vec::new();
    let mut json = serde_json::Map::new();
    for transport in ["udp", "tcp"] {
        let before = counter(&client, "records").await?;
        let bad_before = counter(&client, "bad").await?;
        // The kernel's count for the UDP socket (Linux), when the server can read it.
        let kernel_before = counter(&client, "udp_dropped").await.ok();
        // Made before the clock starts: what is measured is the server, not the sender's
        // formatting.
        let messages: Vec<Vec<u8>> = (0..records).map(|i| message(i, size)).collect();
        let started = Instant::now();
        match transport {
            "udp" => send_udp(udp, messages).await?,
            _ => send_tcp(tcp, &messages).await?,
        }
        let sent = started.elapsed();
        // Until every message is counted, or the count stands still.
        let (mut taken, mut last_change) = (0, Instant::now());
        while taken < records {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let now = counter(&client, "records").await? - before;
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
        let bad = counter(&client, "bad").await? - bad_before;
        let kernel = match (kernel_before, counter(&client, "udp_dropped").await.ok()) {
            (Some(before), Some(after)) if transport == "udp" => Some(after - before),
            _ => None,
        };
        let rate = taken as f64 / elapsed.as_secs_f64();
        let lost = records - taken.min(records);
        lines.push(format!(
            "syslog {transport}: {taken} of {records} messages ({size} B of text) taken in {:.3} s: {rate:.0} records/s (sent in {:.3} s; {lost} not taken{}, {bad} bad)",
            elapsed.as_secs_f64(),
            sent.as_secs_f64(),
            match kernel {
                Some(n) => format!("; the kernel counted {n} datagrams dropped, its receive buffer full"),
                None => String::new(),
            },
        ));
        json.insert(
            transport.into(),
            json!({"records": records, "taken": taken, "rate": rate, "lost": lost, "bad": bad,
                   "kernel_dropped": kernel, "seconds": elapsed.as_secs_f64()}),
        );
    }
    Ok(Report {
        lines,
        json: json!({"scenario": "syslog", "size": size, "results": json}),
    })
}

/// Sends each message as one datagram, with blocking sends from [`UDP_SENDERS`] threads
/// of their own (as devices do, each from its socket).
async fn send_udp(to: SocketAddr, messages: Vec<Vec<u8>>) -> anyhow::Result<()> {
    let messages = std::sync::Arc::new(messages);
    let mut senders = Vec::new();
    for first in 0..UDP_SENDERS {
        let messages = std::sync::Arc::clone(&messages);
        senders.push(tokio::task::spawn_blocking(
            move || -> anyhow::Result<()> {
                let socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
                socket.connect(to)?;
                for message in messages.iter().skip(first).step_by(UDP_SENDERS) {
                    socket.send(message)?;
                }
                Ok(())
            },
        ));
    }
    for sender in senders {
        sender.await??;
    }
    Ok(())
}

async fn send_tcp(to: SocketAddr, messages: &[Vec<u8>]) -> anyhow::Result<()> {
    let mut stream = tokio::net::TcpStream::connect(to).await?;
    let mut chunk = Vec::with_capacity(TCP_CHUNK + 4096);
    for line in messages {
        chunk.extend_from_slice(format!("{} ", line.len()).as_bytes());
        chunk.extend_from_slice(line);
        if chunk.len() >= TCP_CHUNK {
            stream.write_all(&chunk).await?;
            chunk.clear();
        }
    }
    stream.write_all(&chunk).await?;
    stream.shutdown().await?;
    Ok(())
}
