//! A batch's records about the subject before them take its matches, and a record about
//! another subject — one that ends alike, or one of another length — its own.

mod common;

use std::sync::Arc;

use common::batch;
use herald_router::{Queue, RouteContext, Router};

fn subscribe(router: &Router, id: u64, subject: &str) -> Arc<Queue> {
    common::subscribe(router, (1, id), subject, None, None)
}

/// The sequence numbers of what `queue` holds.
fn seqs(queue: &Queue) -> Vec<u64> {
    let mut out = Vec::new();
    queue.drain(&mut out, usize::MAX);
    out.iter().map(|delivery| delivery.seq).collect()
}

#[test]
fn each_record_goes_where_its_own_subject_matches() {
    let router = Router::new();
    let a = subscribe(&router, 1, "A.*");
    let b = subscribe(&router, 2, "B.x1");
    let longer = subscribe(&router, 3, "A.x11");
    let records = batch(&[
        "A.x1", "A.x1", "B.x1", "A.x1", "B.x1", "A.x11", "C.y2", "A.x1",
    ]);
    let mut context = RouteContext::default();
    let stats = router.route(&mut context, &records, 0);
    let first = stats.first_seq;
    let at = |offsets: &[u64]| offsets.iter().map(|o| first + o).collect::<Vec<_>>();
    assert_eq!(seqs(&a), at(&[0, 1, 3, 5, 7]));
    assert_eq!(seqs(&b), at(&[2, 4]));
    assert_eq!(seqs(&longer), at(&[5]));
}
