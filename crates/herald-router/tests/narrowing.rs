//! A subscription whose identity may see only some subjects gets only those, whatever its
//! filter asks, on the exact and the pattern path, and the cached path too.

mod common;

use std::sync::Arc;

use common::batch;
use herald_router::{GlobRules, Queue, RouteContext, Router};

fn subscribe(router: &Router, id: u64, subject: &str, visible: Option<GlobRules>) -> Arc<Queue> {
    common::subscribe(router, (1, id), subject, visible, None)
}

#[test]
fn a_subscription_sees_only_what_its_identity_may() {
    let router = Router::new();
    let daq = GlobRules::new(&["DAQ.*".to_string()], &["DAQ.Secret".to_string()]).unwrap();
    let everything = subscribe(&router, 1, "*", Some(daq.clone()));
    let exact_denied = subscribe(&router, 2, "Magnet.Current", Some(daq.clone()));
    let exact_allowed = subscribe(&router, 3, "DAQ.Readout", Some(daq));
    let open = subscribe(&router, 4, "*", None);

    let records = batch(&["DAQ.Readout", "DAQ.Secret", "Magnet.Current", "DAQ.Readout"]);
    let mut context = RouteContext::default();
    // Twice: the second time through the match cache.
    for _ in 0..2 {
        router.route(&mut context, &records, 0);
    }
    assert_eq!(everything.depth(), 4, "DAQ.Readout twice, two batches");
    assert_eq!(exact_denied.depth(), 0);
    assert_eq!(exact_allowed.depth(), 4);
    assert_eq!(open.depth(), 8);
}
