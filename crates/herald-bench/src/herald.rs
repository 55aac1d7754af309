//! The Herald adapter: the native protocol through the Rust client. Messages are full log
//! records — subject, type, priority, origin and text — not opaque bytes.

use herald_client::{monitor_value, Client, ClientOptions, Event, Subscription};
use herald_proto::{Filter, Kind, Priority, Record, Value};

use crate::system::{Publisher, Received, Subscriber, System};

/// Herald at `url`.
#[derive(Debug, Clone)]
pub struct Herald {
    /// `herald://host:port`: publishers connect here (subscribers too, unless
    /// `subscriber_url` says otherwise).
    pub url: String,
    /// Where subscribers connect, when not to `url`: another member of a cluster, to
    /// measure delivery across a route.
    pub subscriber_url: Option<String>,
}

/// Connects to `url` under the client name `name`.
pub(crate) async fn connect(url: &str, name: &str) -> anyhow::Result<Client> {
    let options = ClientOptions {
        name: name.to_string(),
        ..ClientOptions::default()
    };
    Ok(Client::connect_with(url, options).await?)
}

/// Returns the record every Herald publisher sends: a log record on `subject` with `size`
/// bytes of text, type `bench`, priority INFO and this process as origin.
pub(crate) fn bench_record(subject: &str, size: usize) -> Record {
    Record {
        type_name: "bench".to_string(),
        priority: Priority::Info,
        origin: herald_client::origin::local_origin(),
        text: "x".repeat(size),
        ..Record::new(Kind::Log, subject)
    }
}

/// Returns counter `name` of the monitor's section `section` (`archive`, `syslog`,
/// `storms`…); `absent` says why the server may not have the section.
///
/// # Errors
/// When the server has no such section or the section lacks the counter.
pub(crate) async fn section_counter(
    client: &Client,
    section: &str,
    name: &str,
    absent: &str,
) -> anyhow::Result<u64> {
    let data = client.monitor().await?;
    let Some(Value::Map(fields)) = monitor_value(&data, section) else {
        anyhow::bail!("the server's monitor has no `{section}` section ({absent})");
    };
    match monitor_value(fields, name) {
        Some(Value::Int(n)) => Ok(*n as u64),
        _ => anyhow::bail!("the monitor's {section} section has no `{name}`"),
    }
}

/// Numbers texts: `n` in hex over the start of a text (its length kept): the peers'
/// payloads differ by their send time, and identical log records would collapse as a log
/// storm. The rest of the text is kept aside once, so that numbering one is two appends
/// (rebuilt in place, each text's UTF-8 was checked again: a tenth of the publishing
/// thread's time, where nats.go's bench writes 8 bytes).
pub(crate) struct Numbered {
    /// How many hex digits (the text's length, up to 16).
    digits: usize,
    /// What follows them.
    tail: String,
}

impl Numbered {
    /// Numbers texts shaped as `text`.
    pub(crate) fn new(text: &str) -> Numbered {
        // The digits replace whole characters only: fewer of them where 16 bytes would cut
        // one.
        let digits = (0..=text.len().min(16))
            .rev()
            .find(|&at| text.is_char_boundary(at))
            .unwrap_or(0);
        Numbered {
            digits,
            tail: text[digits..].to_string(),
        }
    }

    /// Makes `text` the text numbered `n`.
    pub(crate) fn write(&self, text: &mut String, n: u64) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut digits = [b'0'; 16];
        for (index, digit) in digits[..self.digits].iter_mut().enumerate() {
            *digit = HEX[((n >> (4 * (self.digits - 1 - index))) & 0xf) as usize];
        }
        text.clear();
        text.push_str(std::str::from_utf8(&digits[..self.digits]).expect("hex digits"));
        text.push_str(&self.tail);
    }
}

impl System for Herald {
    type Publisher = HeraldPublisher;
    type Subscriber = HeraldSubscriber;

    fn name(&self) -> &'static str {
        "herald"
    }

    async fn publisher(&self, subject: &str, size: usize) -> anyhow::Result<HeraldPublisher> {
        let record = bench_record(subject, size);
        Ok(HeraldPublisher {
            client: connect(&self.url, "bench-pub").await?,
            numbered: Numbered::new(&record.text),
            record,
            sent: 0,
        })
    }

    async fn subscriber(&self, subject: &str) -> anyhow::Result<HeraldSubscriber> {
        let url = self.subscriber_url.as_deref().unwrap_or(&self.url);
        let client = connect(url, "bench-sub").await?;
        let subscription = client.subscribe(Filter::subject(subject)?).await?;
        Ok(HeraldSubscriber {
            _client: client,
            subscription,
        })
    }
}

/// Publishes one record over and over, restamped and renumbered each time.
pub struct HeraldPublisher {
    client: Client,
    record: Record,
    numbered: Numbered,
    sent: u64,
}

impl Publisher for HeraldPublisher {
    async fn publish(&mut self, sent_ns: i64) -> anyhow::Result<()> {
        self.record.time = sent_ns;
        self.sent += 1;
        self.numbered.write(&mut self.record.text, self.sent);
        Ok(self.client.publish(&self.record).await?)
    }

    async fn flush(&mut self) -> anyhow::Result<()> {
        Ok(self
            .client
            .flush(std::time::Duration::from_secs(60))
            .await?)
    }
}

/// One subscription; records are not decoded, the send time is read from their header.
pub struct HeraldSubscriber {
    _client: Client,
    subscription: Subscription,
}

impl Subscriber for HeraldSubscriber {
    async fn next(&mut self) -> Option<Received> {
        let event = match self.subscription.try_next() {
            Some(event) => event,
            None => self.subscription.next().await?,
        };
        Some(match event {
            Event::Record(delivered) => Received::Message {
                sent_ns: delivered.time(),
            },
            Event::Gap(gap) => Received::Lost(gap.count),
            // A failover: nothing is counted, the publisher's resend is.
            Event::Interrupted(_) => Received::Lost(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_numbered_in_their_text_which_keeps_its_length() {
        let mut text = "x".repeat(20);
        Numbered::new(&text.clone()).write(&mut text, 0xabc);
        assert_eq!(text, "0000000000000abcxxxx");
        let mut short = "xyz".to_string();
        Numbered::new(&short.clone()).write(&mut short, 0x1234);
        assert_eq!(short, "234");
        // Sixteen bytes would cut the `é` (bytes 15 and 16): fifteen digits.
        let mut accented = format!("{}é{}", "x".repeat(15), "y".repeat(4));
        let numbered = Numbered::new(&accented.clone());
        numbered.write(&mut accented, 0x1f);
        assert_eq!(accented, "00000000000001féyyyy");
        numbered.write(&mut accented, 0x20);
        assert_eq!(accented, "000000000000020éyyyy");
    }
}
