//! What this member's own subscribers want, as the other members are told: one interest
//! per distinct filter and queue group (however many subscriptions share them; the group
//! goes in the announcement's delivery options, and makes this member one member of that
//! group at the others), announced over every route as
//! `SUBSCRIBE` when the first subscription with that filter comes and withdrawn with
//! `UNSUBSCRIBE` when the last goes. A new route is told every interest there is first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use herald_proto::frame::Subscribe;
use herald_proto::{DeliveryOptions, Filter, Frame};
use herald_router::{InterestListener, Subscription};
use tokio::sync::mpsc::UnboundedSender;

/// One interest: a filter some local subscriptions share.
#[derive(Debug)]
struct Interest {
    id: u64,
    filter: Filter,
    group: Option<Arc<str>>,
    subscriptions: usize,
}

#[derive(Debug, Default)]
struct Table {
    /// By the filter's encoding and the group: subscriptions with equal filters in the
    /// same group (or none) share an interest.
    by_filter: HashMap<Vec<u8>, Interest>,
    /// Which filter each local subscription (connection, id) holds.
    by_subscription: HashMap<(u64, u64), Vec<u8>>,
    next_id: u64,
    /// The routes to tell, by route connection id.
    routes: HashMap<u64, UnboundedSender<Frame>>,
}

/// The local interests, and the routes they are announced on.
#[derive(Debug, Default)]
pub struct Interests {
    table: Mutex<Table>,
}

fn subscribe_frame(interest: &Interest) -> Frame {
    Frame::Subscribe(Subscribe {
        cid: interest.id,
        subscription: interest.id,
        filter: interest.filter.clone(),
        options: DeliveryOptions {
            group: interest.group.clone(),
            ..DeliveryOptions::default()
        },
    })
}

impl Interests {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts telling route `route` of interests: every current one now, then each change.
    pub fn add_route(&self, route: u64, sender: UnboundedSender<Frame>) {
        let mut table = self.table();
        for interest in table.by_filter.values() {
            let _ = sender.send(subscribe_frame(interest));
        }
        table.routes.insert(route, sender);
    }

    /// Stops telling route `route` through `sender` (a newer connection of the same route
    /// may have replaced it: then nothing changes).
    pub fn remove_route(&self, route: u64, sender: &UnboundedSender<Frame>) {
        let mut table = self.table();
        if table
            .routes
            .get(&route)
            .is_some_and(|s| s.same_channel(sender))
        {
            table.routes.remove(&route);
        }
    }

    /// Returns the number of distinct interests.
    pub fn len(&self) -> usize {
        self.table().by_filter.len()
    }

    /// Returns true if no local subscription wants anything.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn key_of(filter: &Filter, group: Option<&str>) -> Vec<u8> {
    let mut key = Vec::new();
    filter.encode(&mut key);
    if let Some(group) = group {
        // The filter is one MessagePack value, so where it ends is known: the group follows.
        key.push(0);
        key.extend_from_slice(group.as_bytes());
    }
    key
}

impl InterestListener for Interests {
    fn added(&self, subscription: &Arc<Subscription>) {
        let key = key_of(&subscription.filter, subscription.group.as_deref());
        let mut table = self.table();
        table
            .by_subscription
            .insert(subscription.key(), key.clone());
        if let Some(interest) = table.by_filter.get_mut(&key) {
            interest.subscriptions += 1;
            return;
        }
        table.next_id += 1;
        let interest = Interest {
            id: table.next_id,
            filter: subscription.filter.clone(),
            group: subscription.group.clone(),
            subscriptions: 1,
        };
        for sender in table.routes.values() {
            let _ = sender.send(subscribe_frame(&interest));
        }
        table.by_filter.insert(key, interest);
    }

    fn removed(&self, subscription: &Arc<Subscription>) {
        let mut table = self.table();
        let Some(key) = table.by_subscription.remove(&subscription.key()) else {
            return;
        };
        let Some(interest) = table.by_filter.get_mut(&key) else {
            return;
        };
        interest.subscriptions -= 1;
        if interest.subscriptions > 0 {
            return;
        }
        let id = interest.id;
        table.by_filter.remove(&key);
        for sender in table.routes.values() {
            let _ = sender.send(Frame::Unsubscribe {
                cid: id,
                subscription: id,
            });
        }
    }
}
