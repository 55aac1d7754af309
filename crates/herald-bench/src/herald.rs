//! The Herald adapter: the native protocol through the Rust client. Messages are full log
//! records — subject, type, priority, origin and text — not opaque bytes.

use herald_client::{Client, ClientOptions, Event, Subscription};
use herald_proto::{Filter, Kind, Priority, Record};

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

impl System for Herald {
    type Publisher = HeraldPublisher;
    type Subscriber = HeraldSubscriber;

    fn name(&self) -> &'static str {
        "herald"
    }

    async fn publisher(&self, subject: &str, size: usize) -> anyhow::Result<HeraldPublisher> {
        Ok(HeraldPublisher {
            client: connect(&self.url, "bench-pub").await?,
            record: bench_record(subject, size),
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

/// Publishes one record over and over, restamped each time.
pub struct HeraldPublisher {
    client: Client,
    record: Record,
}

impl Publisher for HeraldPublisher {
    async fn publish(&mut self, sent_ns: i64) -> anyhow::Result<()> {
        self.record.time = sent_ns;
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
