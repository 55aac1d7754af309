//! Leased namespaces (archive on Apache Cassandra, no owner configured): every member tries
//! to take or renew each lease a few times per lease time, with Cassandra's lightweight
//! transactions ([`InfoLeases`]), so that when the owner dies another member holds the lease
//! within the lease time. The owner saves the latest value of every object of its leased
//! namespaces in Cassandra ([`super::saver::Saver`]); a member that takes a lease over loads them from
//! there, serves them, and sends them to the other members.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use herald_archive::cql::{CqlOptions, Holder, InfoLeases};
use herald_info::InfoObject;
use herald_proto::info::ObjectData;
use herald_proto::msgpack::Reader;
use tokio::time::Instant;

use super::namespaces::Owner;
use super::Cluster;
use crate::local::Local;
use crate::shutdown::Shutdown;

/// Keeps the leases of the leased namespaces until the server stops; then gives up those it
/// holds, so that another member takes them at once.
pub async fn run(
    shared: Arc<Local>,
    cluster: Arc<Cluster>,
    options: CqlOptions,
    mut stop: Shutdown,
) {
    let info = &cluster.info;
    let me = Holder {
        owner: cluster.me.name.clone(),
        member: cluster.me.id,
    };
    let lease = info.namespaces.lease;
    // The row lives three quarters of the lease and is renewed every quarter: a dead
    // owner's lease is taken within the lease time.
    let ttl = i32::try_from((lease * 3 / 4).as_secs().max(1)).unwrap_or(i32::MAX);
    let mut tick = tokio::time::interval(lease / 4);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut leases: Option<Arc<InfoLeases>> = None;
    let mut held_at: HashMap<String, Instant> = HashMap::new();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = stop.recv() => break,
        }
        let leases = match &leases {
            Some(leases) => Arc::clone(leases),
            None => match InfoLeases::connect(&options).await {
                Ok(connected) => {
                    let connected = Arc::new(connected);
                    info.saver.start(Arc::clone(&connected));
                    leases = Some(Arc::clone(&connected));
                    connected
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot reach Cassandra for the namespaces' leases; trying again");
                    continue;
                }
            },
        };
        for namespace in info.namespaces.iter().filter(|n| n.leased()) {
            match leases.hold(&namespace.name, &me, ttl).await {
                Ok(holder) => {
                    let owner = (holder.member != 0).then(|| Owner {
                        name: holder.owner.clone(),
                        member: holder.member,
                    });
                    let before = namespace.owner();
                    let mine = holder.member == me.member;
                    let was_mine = before.as_ref().is_some_and(|b| b.member == me.member);
                    if mine {
                        held_at.insert(namespace.name.clone(), Instant::now());
                    }
                    if mine && !was_mine {
                        // No owner while the values are loaded: changes are refused, and
                        // this member is its owner only once it serves what was saved.
                        namespace.set_owner(None);
                        take_over(&shared, &cluster, &leases, &namespace.name).await;
                    }
                    namespace.set_owner(owner.clone());
                    if mine && !was_mine {
                        // The other members' copies get what this member now serves.
                        for link in cluster.links() {
                            info.send_snapshot(&shared, &link);
                        }
                    }
                    if before.as_ref().map(|b| b.member) != owner.as_ref().map(|o| o.member) {
                        tracing::info!(namespace = %namespace.name, owner = %holder.owner, "namespace owner");
                    }
                }
                Err(error) => {
                    tracing::warn!(namespace = %namespace.name, %error, "cannot renew or read a namespace's lease");
                    let expired = held_at
                        .get(&namespace.name)
                        .is_none_or(|at| at.elapsed() > Duration::from_secs(ttl as u64));
                    let mine = namespace.owner().is_some_and(|o| o.member == me.member);
                    if mine && expired {
                        // Another member may hold it by now: stop acting as its owner.
                        namespace.set_owner(None);
                    }
                }
            }
        }
    }
    if let Some(leases) = leases {
        for namespace in info.namespaces.owned_by(&me.owner) {
            let _ = leases.release(&namespace.name, &me).await;
        }
    }
}

/// This member took `namespace`'s lease: serves the latest values saved in Cassandra (its
/// caller then sends them to the other members).
async fn take_over(shared: &Local, cluster: &Cluster, leases: &InfoLeases, namespace: &str) {
    let objects = match leases.load(namespace).await {
        Ok(objects) => objects,
        Err(error) => {
            tracing::error!(%namespace, %error, "cannot load a namespace taken over from Cassandra; serving this member's copy");
            return;
        }
    };
    let objects: Vec<InfoObject> = objects
        .iter()
        .filter_map(|bytes| ObjectData::decode(&mut Reader::new(bytes)).ok())
        .map(InfoObject::from)
        .collect();
    let count = objects.len();
    let info = &cluster.info;
    shared.info.replace_copies(
        objects,
        |name| {
            info.namespaces
                .of(name)
                .is_some_and(|n| n.name == namespace)
        },
        &shared.router,
    );
    tracing::info!(%namespace, objects = count, "namespace taken over: serving the values saved in Cassandra");
}
