//! A cluster route's interests share one queue: a record matching several of them is queued
//! once; records that came over a route reach local subscriptions only (one hop); and the
//! listener hears of local subscriptions, never of route interests.

mod common;

use std::sync::{Arc, Mutex};

use common::batch;
use herald_proto::Filter;
use herald_router::{InterestListener, Queue, QueueConfig, RouteContext, Router, Subscription};

fn add(router: &Router, connection: u64, id: u64, subject: &str, queue: &Arc<Queue>, route: bool) {
    router.subscribe(Arc::new(Subscription {
        connection,
        id,
        filter: Filter::subject(subject).unwrap(),
        queue: Arc::clone(queue),
        visible: None,
        visible_info: None,
        route,
        group: None,
    }));
}

fn queue() -> Arc<Queue> {
    Arc::new(Queue::new(QueueConfig::default(), Arc::default()))
}

#[test]
fn a_record_crosses_a_route_once_and_never_a_second_one() {
    let router = Router::new();
    let (route, local) = (queue(), queue());
    add(&router, 9, 1, "A.*", &route, true);
    add(&router, 9, 2, "*", &route, true);
    add(&router, 9, 3, "A.x", &route, true);
    add(&router, 1, 1, "*", &local, false);
    let records = batch(&["A.x", "B.y"]);
    router.route(&mut RouteContext::default(), &records, 0);
    assert_eq!(
        route.depth(),
        2,
        "each record once, however many interests match"
    );
    assert_eq!(local.depth(), 2);
    router.route(&mut RouteContext::from_route(), &records, 0);
    assert_eq!(
        route.depth(),
        2,
        "nothing that came over a route goes over another"
    );
    assert_eq!(local.depth(), 4);
}

#[derive(Debug, Default)]
struct Heard(Mutex<Vec<String>>);

impl InterestListener for Heard {
    fn added(&self, subscription: &Arc<Subscription>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("+{}", subscription.filter.subject));
    }
    fn removed(&self, subscription: &Arc<Subscription>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("-{}", subscription.filter.subject));
    }
}

#[test]
fn the_listener_hears_of_local_subscriptions_only() {
    let router = Router::new();
    let local = queue();
    add(&router, 1, 1, "Before.*", &local, false);
    let heard = Arc::new(Heard::default());
    assert!(router.set_listener(Arc::clone(&heard) as Arc<dyn InterestListener>));
    add(&router, 1, 2, "A.*", &local, false);
    add(&router, 9, 1, "Far.*", &queue(), true);
    router.unsubscribe(1, 2);
    router.remove_connection(1);
    router.remove_connection(9);
    let heard = heard.0.lock().unwrap().clone();
    assert_eq!(heard, ["+Before.*", "+A.*", "-A.*", "-Before.*"]);
}
