//! Herald's router: the subscription index, the per-publisher match cache, and the bounded
//! per-subscriber queues that decouple publishers from slow subscribers.
//!
//! # Layout
//! - [`router`]: [`Router`] — subscribe, unsubscribe, `route` a batch.
//! - [`index`]: [`Index`], the immutable snapshot of subscriptions (exact subjects hashed,
//!   patterns scanned on a cache miss) and [`Matched`], results split by priority channel.
//! - [`cache`]: [`MatchCache`], subject → matches, invalidated by index generation.
//! - [`queue`]: [`Queue`] and [`Delivery`]: bounded in records and bytes, with the
//!   subscriber's policy, priority-aware shedding, latest-only delivery, gaps and drop counts.
//! - [`subscription`]: [`Subscription`], one subscriber's filter and queue.
//! - [`rules`]: [`GlobRules`], allow and deny globs: what an identity may see (and, in the
//!   server, publish, read and write).
//!
//! # Example
//! ```
//! use std::sync::Arc;
//! use herald_proto::{Filter, Frame, Kind, Record};
//! use herald_router::{Queue, QueueConfig, RouteContext, Router, Subscription};
//!
//! let router = Router::new();
//! let queue = Arc::new(Queue::new(QueueConfig::default(), Arc::default()));
//! let filter = Filter::subject("ANTENNA.*").unwrap();
//! router.subscribe(Arc::new(Subscription { connection: 1, id: 1, filter, queue: queue.clone(), visible: None, visible_info: None, route: false, group: None }));
//!
//! let mut publish = Vec::new();
//! herald_proto::frame::write_publish_header(&mut publish, 0, Default::default(), 1);
//! Record::new(Kind::Log, "ANTENNA.DV01").encode(&mut publish);
//! publish.insert(0, herald_proto::FrameType::Publish as u8);
//! let Ok(Frame::Publish(batch)) = Frame::decode(publish.into()) else { panic!() };
//!
//! let stats = router.route(&mut RouteContext::default(), &batch.records, 0);
//! assert_eq!(stats.deliveries, 1);
//! assert_eq!(queue.depth(), 1);
//! ```

pub mod cache;
pub mod index;
pub mod queue;
pub mod router;
pub mod rules;
pub mod subscription;

pub use cache::MatchCache;
pub use index::{Index, Matched};
pub use queue::{Delivery, DropCounters, DropReason, Drops, Gap, Queue, QueueBudget, QueueConfig};
pub use router::{InterestListener, Origin, RouteContext, RouteStats, Router};
pub use rules::GlobRules;
pub use subscription::Subscription;
