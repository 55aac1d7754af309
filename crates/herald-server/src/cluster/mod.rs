//! This server as a member of a cluster (`[cluster]`, docs/cluster.md): a route listener,
//! dialers to seeds and to the members they tell of (a full mesh, one route per pair of
//! members), and the interests of local subscribers announced over every route, so that a
//! member sends a record over a route only when a subscriber on the far side wants it. A
//! record that came over a route goes to local subscribers only: one hop, exactly once.
//!
//! - [`interest`]: local interests and their announcement.
//! - [`link`]: what is kept for one other member across its route's connections.
//! - [`route`]: one route connection: handshake, the far side's interests, records both ways;
//!   [`secret`]: the cluster secret members prove they know at its start.
//! - [`dial`]: the route listener and the dialers, with backoff.
//! - [`namespaces`]: the namespaces of information objects and their owners; [`info`]:
//!   changes forwarded to the owner, the owner's changes sent to every member's copy;
//!   [`lease`]: leased owners, in Cassandra; [`saver`]: the owner's changes saved there.
//! - [`query`]: archive queries merged across the members' embedded archives.

pub mod dial;
pub mod info;
pub mod interest;
#[cfg(feature = "cql")]
pub mod lease;
pub mod link;
pub mod namespaces;
pub mod query;
pub mod requests;
pub mod route;
pub mod saver;
pub mod secret;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use herald_proto::route::{Member, Members};
use herald_proto::value::{Field, Value};
use herald_proto::Frame;
use tokio::net::TcpListener;
use tokio::sync::Notify;

use crate::config::ClusterConfig;
use crate::local::Local;

pub use interest::Interests;
pub use link::Link;

/// Members whose dropped link's losses are kept for their return.
const MAX_LOST_LINKS: usize = 256;

/// The cluster as this member sees it.
#[derive(Debug)]
pub struct Cluster {
    /// The cluster's name.
    pub name: String,
    /// This member.
    pub me: Member,
    /// Local interests, announced over the routes.
    pub interests: Arc<Interests>,
    state: Mutex<State>,
    /// Told when a route comes or goes, so dialers look again.
    pub changed: Notify,
    /// Members to start a dialer for (started by [`start`]'s task, not by a route's).
    dials: tokio::sync::mpsc::UnboundedSender<Member>,
    /// Information objects across the cluster: namespaces, owners, forwarded changes.
    pub info: info::CloudInfo,
    /// Archive queries asked of the other members.
    pub asked: query::Asked,
    /// How long a link outlives its route's connection (`[cluster] hold`).
    pub hold: std::time::Duration,
    /// The secret a route's far side must prove it knows; `None`: routes are not
    /// authenticated.
    pub secret: Option<secret::RouteSecret>,
    /// TLS to the other members' route listeners (`[cluster] tls`): how a dialer checks
    /// their certificates. The listener then speaks TLS with the server's certificate.
    pub tls: Option<herald_client::tls::Tls>,
}

/// What guards the routes, read before the server binds ([`crate::Server::preflight`]).
#[derive(Debug, Default)]
pub struct RouteGuards {
    /// The cluster secret (`secret_file`).
    pub secret: Option<secret::RouteSecret>,
    /// TLS to the other members, checking their certificates against `ca`.
    pub tls: Option<herald_client::tls::Tls>,
}

impl RouteGuards {
    /// Reads the files `config` names: the secret, the CA of the members' certificates.
    ///
    /// # Errors
    /// A message naming the file that cannot be read or used.
    pub fn load(config: &ClusterConfig) -> Result<RouteGuards, String> {
        let secret = match &config.secret_file {
            None => None,
            Some(path) => Some(secret::RouteSecret::load(path)?),
        };
        let tls = match &config.tls {
            None => None,
            Some(ca) => {
                let options = herald_client::TlsOptions {
                    ca_file: ca.clone(),
                    client_cert: None,
                };
                let tls = herald_client::tls::Tls::new(&options);
                Some(tls.map_err(|err| format!("TLS on routes (cluster.ca): {err}"))?)
            }
        };
        Ok(RouteGuards { secret, tls })
    }
}

impl State {
    /// Whether `member` is an old self of a member routed to now: the same name, another
    /// id. Names are unique in a cluster and a restarted member is a new id, so that id is
    /// gone for good (whoever still gossips it).
    fn old_self(&self, member: &Member) -> bool {
        self.links
            .values()
            .any(|l| l.is_up() && l.member().name == member.name && l.member().id != member.id)
    }

    /// Forgets the old selves of `member`, whose route is up: they are no longer listed,
    /// told of in `MEMBERS` or dialed. Their links, if any, still hold until they expire.
    fn forget_old_selves(&mut self, member: &Member) {
        let old: Vec<u64> = self
            .known
            .values()
            .filter(|m| m.name == member.name && m.id != member.id)
            .map(|m| m.id)
            .collect();
        for id in old {
            self.known.remove(&id);
            self.dialing.remove(&id);
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// Every other member known, by id.
    known: BTreeMap<u64, Member>,
    /// The links to other members, up or down (for the hold time), by the far member's id.
    links: HashMap<u64, Arc<Link>>,
    /// Members a dialer already runs for.
    dialing: std::collections::HashSet<u64>,
    /// What the dropped links of members held, by member: told to the member if it returns.
    lost: HashMap<u64, herald_router::Gap>,
}

impl Cluster {
    /// A cluster member named `server` whose route listener others reach at `address`, its
    /// routes guarded by `guards`, and the receiver of the members it asks to dial.
    pub fn new(
        config: &ClusterConfig,
        server: &str,
        address: String,
        guards: RouteGuards,
    ) -> (Cluster, tokio::sync::mpsc::UnboundedReceiver<Member>) {
        let (dials, requests) = tokio::sync::mpsc::unbounded_channel();
        let id = loop {
            let mut bytes = [0u8; 8];
            ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
                .expect("the operating system's random source");
            let id = u64::from_be_bytes(bytes);
            if id != 0 {
                break id;
            }
        };
        let namespaces = namespaces::Namespaces::new(&config.namespaces, config.lease);
        let cluster = Cluster {
            dials,
            info: info::CloudInfo::new(namespaces, server),
            asked: query::Asked::default(),
            hold: config.hold,
            secret: guards.secret,
            tls: guards.tls,
            name: config.name.clone(),
            me: Member {
                id,
                name: server.to_string(),
                address,
            },
            interests: Arc::new(Interests::default()),
            state: Mutex::new(State::default()),
            changed: Notify::new(),
        };
        (cluster, requests)
    }

    /// Asks for a dialer to `member`.
    pub fn request_dial(&self, member: Member) {
        let _ = self.dials.send(member);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The `MEMBERS` frame this member sends.
    pub fn members_frame(&self) -> Frame {
        members_frame(&self.name, &self.me, &self.state())
    }

    /// The first `MEMBERS` of a route connection, with this side's `nonce` when the cluster
    /// has a secret.
    pub fn first_members_frame(&self, nonce: Option<Vec<u8>>) -> Frame {
        match members_frame(&self.name, &self.me, &self.state()) {
            Frame::Members(members) => Frame::Members(Members { nonce, ..members }),
            other => other,
        }
    }

    /// Learns of `members` (from a route's `MEMBERS`); returns those new to it, which this
    /// member should dial (those with a greater id: the smaller id dials).
    pub fn learn(&self, members: &[Member]) -> Vec<Member> {
        let mut state = self.state();
        let mut dial = Vec::new();
        let mut changed = false;
        for member in members.iter().filter(|m| m.id != self.me.id) {
            if state.old_self(member) {
                continue;
            }
            if state.known.insert(member.id, member.clone()).is_none() {
                changed = true;
                let routed = state.links.get(&member.id).is_some_and(|l| l.is_up());
                if member.id > self.me.id && !routed && state.dialing.insert(member.id) {
                    dial.push(member.clone());
                }
            }
        }
        drop(state);
        if changed {
            self.broadcast(self.members_frame());
        }
        dial
    }

    /// Whether member `id` is known: a dialer of a member that was forgotten stops.
    pub fn knows(&self, id: u64) -> bool {
        self.state().known.contains_key(&id)
    }

    /// Claims the dialer for member `id` (a seed's, once its id is known); false if another
    /// dialer keeps that member's route already.
    pub fn claim_dialer(&self, id: u64) -> bool {
        self.state().dialing.insert(id)
    }

    /// Returns the link to the member named `name` whose route is up, if any.
    pub fn link_to(&self, name: &str) -> Option<Arc<Link>> {
        self.state()
            .links
            .values()
            .find(|l| l.is_up() && l.member().name == name)
            .cloned()
    }

    /// Returns every link, up or down.
    pub fn links(&self) -> Vec<Arc<Link>> {
        self.state().links.values().cloned().collect()
    }

    /// Returns true if a route to member `id` is up.
    pub fn has_route(&self, id: u64) -> bool {
        self.state().links.get(&id).is_some_and(|l| l.is_up())
    }

    /// Attaches a route connection to `far` to its link (made if there is none), and starts
    /// announcing local interests over it: all of them, then `MEMBERS`, which tells the far
    /// side the announcement is whole. Between two members only one connection stays: the one
    /// the member with the smaller id dialed. Returns the link and the connection's token, or
    /// `None` if this connection is the one to close.
    pub fn attach(
        &self,
        shared: &Local,
        far: &Member,
        peer: SocketAddr,
        outbound: bool,
        control: &tokio::sync::mpsc::UnboundedSender<Frame>,
        close: &Arc<Notify>,
    ) -> Result<Option<(Arc<Link>, u64)>, String> {
        let mut state = self.state();
        // Under the lock, so two members of one name arriving at once are not both taken. A
        // restarted member (a new id) is taken once the route to its old self is down.
        if let Some(named) = state
            .links
            .values()
            .find(|l| l.is_up() && l.member().name == far.name && l.member().id != far.id)
        {
            return Err(format!(
                "the member at {} is named `{}`, as the member at {} is already; give each \
                 member its own `name`",
                far.address,
                far.name,
                named.member().address
            ));
        }
        let link = match state.links.get(&far.id) {
            Some(link) => {
                let keeps_old = link.outbound().is_some_and(|old| {
                    link.preferred(self.me.id, old) || !link.preferred(self.me.id, outbound)
                });
                if keeps_old {
                    return Ok(None);
                }
                Arc::clone(link)
            }
            None => {
                let link = Link::new(shared, far.clone(), peer);
                if let Some(lost) = state.lost.remove(&far.id) {
                    // The member was gone longer than the hold time and is back: it hears
                    // what its subscribers lost meanwhile.
                    link.owe_gap(&lost);
                }
                state.links.insert(far.id, Arc::clone(&link));
                link
            }
        };
        let token = link.attach(far.clone(), outbound, control.clone(), Arc::clone(close));
        state.forget_old_selves(far);
        // Under the lock, so no `MEMBERS` of another task slips in before the snapshot ends.
        self.interests.add_route(link.connection, control.clone());
        let _ = control.send(members_frame(&self.name, &self.me, &state));
        drop(state);
        self.changed.notify_waiters();
        Ok(Some((link, token)))
    }

    /// Detaches connection `token` from `link`: the link is down, and holds for a while.
    pub fn detach(
        &self,
        link: &Link,
        token: u64,
        control: &tokio::sync::mpsc::UnboundedSender<Frame>,
    ) {
        self.interests.remove_route(link.connection, control);
        link.detach(token);
        self.changed.notify_waiters();
    }

    /// Ends the links down for longer than the hold time; what they held is counted lost,
    /// and told to the member if it returns.
    pub fn expire(&self, shared: &Local) {
        let expired: Vec<Arc<Link>> = {
            let mut state = self.state();
            let gone: Vec<u64> = state
                .links
                .iter()
                .filter(|(_, l)| l.expired(self.hold))
                .map(|(id, _)| *id)
                .collect();
            gone.iter()
                .filter_map(|id| state.links.remove(id))
                .collect()
        };
        for link in expired {
            let gap = link.end(shared);
            let member = link.member();
            tracing::warn!(member = %member.name, lost = gap.count, "route down for longer than the hold time: its link is dropped");
            crate::events::queue_discarded(
                &shared.monitor,
                link.connection,
                0,
                herald_router::DropReason::Closed,
                gap.count,
            );
            if gap.count > 0 {
                let mut state = self.state();
                // Bounded: members gone for good are forgotten, oldest first.
                if state.lost.len() >= MAX_LOST_LINKS {
                    if let Some(&id) = state.lost.keys().next() {
                        state.lost.remove(&id);
                    }
                }
                state.lost.entry(member.id).or_default().merge(&gap);
            }
        }
    }

    /// Sends `frame` over every route that is up.
    pub fn broadcast(&self, frame: Frame) {
        for link in self.state().links.values() {
            link.send(frame.clone());
        }
    }

    /// The cluster for the monitor: its name, this member, the others and each route.
    pub fn snapshot(&self) -> Value {
        let state = self.state();
        let member = |m: &Member| {
            Value::Map(vec![
                ("id".into(), Value::Str(format!("{:016x}", m.id))),
                ("name".into(), Value::Str(m.name.clone())),
                ("address".into(), Value::Str(m.address.clone())),
                (
                    "routed".into(),
                    Value::Bool(state.links.get(&m.id).is_some_and(|l| l.is_up())),
                ),
            ])
        };
        let routes = state.links.values().map(|l| l.snapshot()).collect();
        let fields: Vec<Field> = vec![
            ("name".into(), Value::Str(self.name.clone())),
            ("me".into(), member(&self.me)),
            (
                "members".into(),
                Value::Array(state.known.values().map(member).collect()),
            ),
            ("routes".into(), Value::Array(routes)),
            ("interests".into(), Value::Int(self.interests.len() as i64)),
            ("namespaces".into(), self.info.namespaces.snapshot()),
        ];
        Value::Map(fields)
    }
}

fn members_frame(cluster: &str, me: &Member, state: &State) -> Frame {
    Frame::Members(Members {
        cluster: cluster.to_string(),
        me: me.clone(),
        known: state.known.values().cloned().collect(),
        nonce: None,
    })
}

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
    Ok(tokio::spawn(lease::run(
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

/// Says how routes are guarded, for the server's banner and `--check-config`.
pub fn describe_routes(config: &ClusterConfig) -> String {
    let secret = match &config.secret_file {
        Some(path) => format!(
            "members prove they know the cluster secret in {}",
            path.display()
        ),
        None => "not authenticated (no cluster secret): keep the route listener on loopback or \
                 a trusted network"
            .to_string(),
    };
    match &config.tls {
        None => secret,
        Some(ca) => {
            let ca = ca
                .as_ref()
                .map_or("the system's trust store".to_string(), |ca| {
                    ca.display().to_string()
                });
            format!("{secret}; TLS, the other members' certificates checked against {ca}")
        }
    }
}

/// Says who this member is and where the others reach its routes, for the server's banner.
pub fn describe(cluster: &Cluster) -> String {
    format!(
        "member {} ({:016x}) of cluster `{}`, routes on {}",
        cluster.me.name, cluster.me.id, cluster.name, cluster.me.address
    )
}
