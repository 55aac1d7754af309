//! Starting this server as a cluster member: the route listener bound, the [`Cluster`]
//! made, and its tasks — the listener, the dialers to the seeds and to members learned of,
//! the task that drops links down for too long, and the leases of leased namespaces.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use super::{dial, info, Cluster, RouteGuards};
use crate::config::ClusterConfig;
use crate::local::Local;

/// Binds the route listener, and starts it, the dialers to the seeds, and the task that drops
/// links down for too long; `guards` (read by [`crate::Server::preflight`]) guard the
/// routes.
///
/// # Errors
/// The bind error, naming the address.
pub async fn start(
    shared: &Arc<Local>,
    config: &ClusterConfig,
    guards: RouteGuards,
) -> std::io::Result<(Arc<Cluster>, Vec<tokio::task::JoinHandle<()>>)> {
    let listener = TcpListener::bind(config.listen).await.map_err(|err| {
        std::io::Error::new(
            err.kind(),
            format!("cannot listen for routes on {}: {err}", config.listen),
        )
    })?;
    let bound: SocketAddr = listener.local_addr()?;
    let address = config
        .advertise
        .clone()
        .unwrap_or_else(|| bound.to_string());
    let (cluster, mut requests) = Cluster::new(config, &shared.config().name, address, guards);
    let cluster = Arc::new(cluster);
    shared
        .router
        .set_listener(Arc::clone(&cluster.interests) as Arc<dyn herald_router::InterestListener>);
    shared.info.add_listener(Arc::new(info::Announcer {
        cluster: Arc::downgrade(&cluster),
    }));
    let mut tasks = vec![tokio::spawn(dial::listen(
        listener,
        Arc::clone(shared),
        Arc::clone(&cluster),
        shared.shutdown_signal(),
    ))];
    let (dialing_shared, dialing_cluster) = (Arc::clone(shared), Arc::clone(&cluster));
    let mut stop = shared.shutdown_signal();
    tasks.push(tokio::spawn(async move {
        loop {
            let member = tokio::select! {
                member = requests.recv() => match member {
                    Some(member) => member,
                    None => return,
                },
                () = stop.recv() => return,
            };
            tokio::spawn(dial::dial(
                member.address,
                Some(member.id),
                Arc::clone(&dialing_shared),
                Arc::clone(&dialing_cluster),
                dialing_shared.shutdown_signal(),
            ));
        }
    }));
    let (expiring, mut stop) = (Arc::clone(&cluster), shared.shutdown_signal());
    let expiring_shared = Arc::clone(shared);
    tasks.push(tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    expiring.expire(&expiring_shared);
                    for link in expiring.links() {
                        link.sample();
                    }
                }
                () = stop.recv() => return,
            }
        }
    }));
    if cluster.info.namespaces.iter().any(|n| n.leased()) {
        tasks.push(leases(shared, &cluster)?);
    }
    for seed in &config.routes {
        tasks.push(tokio::spawn(dial::dial(
            seed.clone(),
            None,
            Arc::clone(shared),
            Arc::clone(&cluster),
            shared.shutdown_signal(),
        )));
    }
    Ok((cluster, tasks))
}

/// Starts the task that keeps the leases of the leased namespaces, in the archive's
/// Cassandra (the configuration allows leased namespaces only with one).
#[cfg(feature = "cql")]
fn leases(
    shared: &Arc<Local>,
    cluster: &Arc<Cluster>,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let crate::config::ArchiveBackendConfig::Cassandra {
        contact_points,
        keyspace,
        replication_factor,
    } = shared.config().archive.backend.clone()
    else {
        return Err(std::io::Error::other(
            "leased namespaces need the archive on Cassandra (archive.backend = \"cassandra\")",
        ));
    };
    let options = herald_archive::cql::CqlOptions {
        contact_points,
        keyspace,
        replication_factor,
        ..herald_archive::cql::CqlOptions::default()
    };
    Ok(tokio::spawn(super::lease::run(
        Arc::clone(shared),
        Arc::clone(cluster),
        options,
        shared.shutdown_signal(),
    )))
}

#[cfg(not(feature = "cql"))]
fn leases(
    _shared: &Arc<Local>,
    _cluster: &Arc<Cluster>,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    Err(std::io::Error::other(
        "this herald was built without Cassandra (cargo feature `cql`), which leased namespaces need",
    ))
}
