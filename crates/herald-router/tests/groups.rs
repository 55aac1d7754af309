//! Queue groups: a record the members of a group match goes to one of them, the one with
//! the shortest queue (equally short ones in turn), while subscribers outside the group get
//! their own copy; a member that leaves hands what is queued for it to the others.

mod common;

use std::sync::Arc;

use common::batch;
use herald_proto::Filter;
use herald_router::{DropReason, Queue, QueueConfig, RouteContext, Router, Subscription};

fn add(router: &Router, id: u64, subject: &str, group: Option<&str>) -> Arc<Queue> {
    common::subscribe(router, (id, id), subject, None, group)
}

fn subjects(n: usize, subject: &str) -> Vec<&str> {
    vec![subject; n]
}

#[test]
fn each_record_goes_to_one_member_and_members_share_evenly() {
    let router = Router::new();
    let members: Vec<Arc<Queue>> = (1..=3)
        .map(|id| add(&router, id, "job.*", Some("workers")))
        .collect();
    let other_group = add(&router, 4, "job.*", Some("auditors"));
    let everyone = add(&router, 5, "*", None);
    let mut context = RouteContext::default();
    for _ in 0..10 {
        router.route(&mut context, &batch(&subjects(30, "job.x")), 0);
    }
    let depths: Vec<u64> = members.iter().map(|q| q.depth()).collect();
    assert_eq!(
        depths.iter().sum::<u64>(),
        300,
        "each record once in the group: {depths:?}"
    );
    assert_eq!(
        depths,
        [100, 100, 100],
        "undrained queues stay equally long"
    );
    assert_eq!(other_group.depth(), 300, "another group gets its own copy");
    assert_eq!(
        everyone.depth(),
        300,
        "a subscriber outside the groups gets every record"
    );
}

#[test]
fn the_member_with_the_shortest_queue_gets_the_record() {
    let router = Router::new();
    let busy = add(&router, 1, "job.*", Some("workers"));
    let mut context = RouteContext::default();
    router.route(&mut context, &batch(&subjects(5, "job.x")), 0);
    assert_eq!(busy.depth(), 5, "alone in its group");
    let idle = add(&router, 2, "job.*", Some("workers"));
    router.route(&mut context, &batch(&subjects(5, "job.x")), 0);
    assert_eq!(
        (busy.depth(), idle.depth()),
        (5, 5),
        "the newcomer catches up first"
    );
    // Drained, the busy member is the shortest again.
    let mut out = Vec::new();
    busy.drain(&mut out, usize::MAX);
    router.route(&mut context, &batch(&subjects(4, "job.x")), 0);
    assert_eq!((busy.depth(), idle.depth()), (4, 5));
}

#[test]
fn members_with_other_filters_share_only_what_they_match() {
    let router = Router::new();
    let narrow = add(&router, 1, "job.a", Some("workers"));
    let wide = add(&router, 2, "job.*", Some("workers"));
    router.route(
        &mut RouteContext::default(),
        &batch(&["job.b", "job.b", "job.a", "job.a"]),
        0,
    );
    assert_eq!(narrow.depth() + wide.depth(), 4);
    assert!(
        narrow.depth() <= 2,
        "only job.a can go to the narrow member"
    );
}

#[test]
fn a_member_that_leaves_hands_its_queue_to_the_others() {
    let router = Router::new();
    let leaving = add(&router, 1, "job.*", Some("workers"));
    let mut context = RouteContext::default();
    router.route(&mut context, &batch(&subjects(6, "job.x")), 0);
    router.route(&mut context, &batch(&subjects(2, "solo.x")), 0);
    assert_eq!(leaving.depth(), 6);
    let staying = add(&router, 2, "job.*", Some("workers"));
    let stranger = add(&router, 3, "job.*", Some("others"));
    assert!(router.unsubscribe(1, 1));
    let (handed, drops) = router.hand_over("workers", &leaving);
    assert_eq!((handed, drops.total()), (6, 0));
    assert_eq!(staying.depth(), 6, "the other member has them");
    assert_eq!(stranger.depth(), 0, "not another group's");
    assert_eq!(leaving.depth(), 0);
    assert_eq!(leaving.discard(DropReason::Closed), 0, "nothing lost");
    let mut out = Vec::new();
    staying.drain(&mut out, usize::MAX);
    let seqs: Vec<u64> = out.iter().map(|d| d.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order: {seqs:?}");
}

#[test]
fn what_no_member_takes_is_counted_lost_by_the_leaving_queue() {
    let router = Router::new();
    let leaving = add(&router, 1, "job.*", Some("workers"));
    router.route(
        &mut RouteContext::default(),
        &batch(&["job.a", "job.b", "job.b"]),
        0,
    );
    let narrow = add(&router, 2, "job.a", Some("workers"));
    assert!(router.unsubscribe(1, 1));
    let (handed, _) = router.hand_over("workers", &leaving);
    assert_eq!(handed, 1);
    assert_eq!(narrow.depth(), 1);
    assert_eq!(leaving.depth(), 2, "the two job.b stay");
    assert_eq!(
        leaving.discard(DropReason::Closed),
        2,
        "and are counted as lost"
    );
    assert_eq!(leaving.dropped(), 2);
}

/// A far member's interest, as a cluster link registers it: on the route's queue.
fn add_route(router: &Router, route: &Arc<Queue>, id: u64, subject: &str, group: Option<&str>) {
    router.subscribe(Arc::new(Subscription {
        connection: 100,
        id,
        filter: Filter::subject(subject).unwrap(),
        queue: Arc::clone(route),
        visible: None,
        visible_info: None,
        route: true,
        group: group.map(Arc::from),
    }));
}

fn groups_of(route: &Queue) -> Vec<Vec<String>> {
    route
        .take_queued()
        .iter()
        .map(|d| {
            d.groups
                .as_deref()
                .map(|g| g.iter().map(ToString::to_string).collect())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn a_far_members_group_interest_is_one_member_and_the_route_names_the_group() {
    let router = Router::new();
    let local = add(&router, 1, "job.*", Some("workers"));
    let route = Arc::new(Queue::new(QueueConfig::default(), Arc::default()));
    add_route(&router, &route, 1, "job.*", Some("workers"));
    let mut context = RouteContext::default();
    router.route(&mut context, &batch(&subjects(10, "job.x")), 0);
    assert_eq!(
        local.depth() + route.depth(),
        10,
        "each record once in the cluster"
    );
    assert_eq!(local.depth(), 5, "shared in turn with the far member");
    assert!(groups_of(&route).iter().all(|g| g == &["workers"]));

    // The far side also wants every record for itself: one copy crosses, naming the group
    // when the far member got it for the group.
    add_route(&router, &route, 2, "*", None);
    add_route(&router, &route, 3, "job.*", Some("auditors"));
    router.route(&mut context, &batch(&subjects(10, "job.x")), 0);
    let crossed = groups_of(&route);
    assert_eq!(crossed.len(), 10, "one copy per record over the route");
    assert!(crossed.iter().all(|g| g.contains(&"auditors".to_string())));
    let for_workers = crossed
        .iter()
        .filter(|g| g.contains(&"workers".to_string()));
    // The local member still holds its 5 of the first batch.
    assert_eq!(for_workers.count() + local.depth() as usize, 5 + 10);
}

#[test]
fn records_from_a_route_reach_only_the_groups_it_names() {
    let router = Router::new();
    let workers = add(&router, 1, "job.*", Some("workers"));
    let auditors = add(&router, 2, "job.*", Some("auditors"));
    let everyone = add(&router, 3, "*", None);
    let mut context = RouteContext::from_route();
    context.set_route_groups(&["auditors".to_string()]);
    router.route(&mut context, &batch(&subjects(4, "job.x")), 0);
    context.set_route_groups(&[]);
    router.route(&mut context, &batch(&subjects(3, "job.x")), 0);
    assert_eq!(auditors.depth(), 4, "the group the route named");
    assert_eq!(workers.depth(), 0, "another member served the workers");
    assert_eq!(everyone.depth(), 7, "ordinary subscribers get every record");
}

#[test]
fn a_leaving_member_hands_over_to_local_members_only() {
    let router = Router::new();
    let leaving = add(&router, 1, "job.*", Some("workers"));
    router.route(
        &mut RouteContext::default(),
        &batch(&subjects(4, "job.x")),
        0,
    );
    assert_eq!(leaving.depth(), 4);
    // Only a far member of the group is left: it may have the records already, so none
    // crosses; they stay with the leaving queue, to be counted as lost.
    let route = Arc::new(Queue::new(QueueConfig::default(), Arc::default()));
    add_route(&router, &route, 2, "job.*", Some("workers"));
    assert!(router.unsubscribe(1, 1));
    let (handed, _) = router.hand_over("workers", &leaving);
    assert_eq!(handed, 0);
    assert_eq!(route.depth(), 0, "nothing crossed the route");
    assert_eq!(leaving.discard(DropReason::Closed), 4, "counted as lost");
}

#[test]
fn a_record_from_a_route_for_a_group_gone_here_is_counted_lost() {
    let router = Router::new();
    let everyone = add(&router, 1, "*", None);
    let mut context = RouteContext::from_route();
    // The far member chose this server for "workers", whose last member left meanwhile.
    context.set_route_groups(&["workers".to_string()]);
    let stats = router.route(&mut context, &batch(&subjects(3, "job.x")), 0);
    assert_eq!(everyone.depth(), 3, "ordinary subscribers still get them");
    assert_eq!(
        stats.dropped.get(DropReason::Closed),
        3,
        "the group's copies lost"
    );
}
