//! This server as a member of a cluster (`[cluster]`, docs/cluster.md): a route listener,
//! dialers to seeds and to the members they tell of (a full mesh, one route per pair of
//! members), and the interests of local subscribers announced over every route, so that a
//! member sends a record over a route only when a subscriber on the far side wants it. A
//! record that came over a route goes to local subscribers only: one hop, exactly once.
//!
//! - [`interest`]: local interests and their announcement.
//! - [`link`]: what is kept for one other member across its route's connections.
//! - [`handshake`]: a route connection's start ([`secret`]: the cluster secret members prove
//!   they know there; [`refusal`]: how a refusal reads); [`route`]: one route connection
//!   after it, the far side's interests, records both ways.
//! - [`dial`]: the route listener and the dialers, with backoff.
//! - [`namespaces`]: the namespaces of information objects and their owners; [`info`]:
//!   changes forwarded to the owner, the owner's changes sent to every member's copy;
//!   [`lease`]: leased owners, in Cassandra; [`saver`]: the owner's changes saved there.
//! - [`query`]: archive queries merged across the members' embedded archives.

pub mod dial;
pub mod guards;
pub mod handshake;
pub mod info;
pub mod interest;
#[cfg(feature = "cql")]
pub mod lease;
pub mod link;
pub mod namespaces;
pub mod query;
pub mod refusal;
pub mod requests;
pub mod route;
pub mod saver;
pub mod secret;
pub mod start;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use herald_proto::route::{Member, Members};
use herald_proto::value::{Field, Value};
use herald_proto::Frame;
use tokio::sync::Notify;

use crate::config::ClusterConfig;
use crate::local::Local;

pub use guards::{describe_routes, RouteGuards};
pub use interest::Interests;
pub use link::Link;
pub use start::start;

/// Members whose dropped link's losses are kept for their return.
const MAX_LOST_LINKS: usize = 256;
/// Members forgotten that are remembered as such.
const MAX_GONE: usize = 1024;

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
    /// Members forgotten (the old selves of restarted members), newest last: gossip of them
    /// is not taken again.
    gone: std::collections::VecDeque<u64>,
}

impl State {
    /// Whether `member` was forgotten: the old self of a member restarted, which is gone for
    /// good (whoever still gossips it).
    fn forgotten(&self, member: &Member) -> bool {
        self.gone.contains(&member.id)
    }

    /// Whether a member of `member`'s name started later (a larger id) is known: `member`
    /// is its old self, gossiped by a member that has not forgotten it yet.
    fn outlived(&self, member: &Member) -> bool {
        self.known
            .values()
            .any(|m| m.name == member.name && m.id > member.id)
    }

    /// Forgets the other members of `member`'s name — those started before it (`older`), or
    /// all of them (its route is up: names are unique in a cluster, and a restarted member
    /// is a new id) —: they are no longer listed, told of in `MEMBERS` or dialed. Their
    /// links, if any, still hold until they expire. Returns whether it forgot any.
    fn forget_named(&mut self, member: &Member, older: bool) -> bool {
        let old: Vec<u64> = self
            .known
            .values()
            .filter(|m| m.name == member.name && m.id != member.id)
            .filter(|m| !older || m.id < member.id)
            .map(|m| m.id)
            .collect();
        let forgot = !old.is_empty();
        for id in old {
            self.known.remove(&id);
            self.dialing.remove(&id);
            if self.gone.len() >= MAX_GONE {
                self.gone.pop_front();
            }
            self.gone.push_back(id);
        }
        forgot
    }
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
        let id = new_id();
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
        members_frame(&self.name, &self.me, &self.state(), None)
    }

    /// The first `MEMBERS` of a route connection, with this side's `nonce` when the cluster
    /// has a secret (and then no other member: they go to a side that proved the secret).
    pub fn first_members_frame(&self, nonce: Option<Vec<u8>>) -> Frame {
        members_frame(&self.name, &self.me, &self.state(), nonce)
    }

    /// Learns of `members` (from a route's `MEMBERS`); returns those new to it, which this
    /// member should dial (those with a greater id: the smaller id dials).
    pub fn learn(&self, members: &[Member]) -> Vec<Member> {
        let mut state = self.state();
        let mut dial = Vec::new();
        let mut changed = false;
        // Of two members of one name, the one started later has the larger id: one with this
        // member's name and a smaller id is its old self. (A larger one is a second member
        // of this name, which the handshake refuses, saying so.)
        let others = members
            .iter()
            .filter(|m| m.id != self.me.id && !(m.name == self.me.name && m.id < self.me.id));
        for member in others {
            if state.forgotten(member) || state.outlived(member) {
                continue;
            }
            changed |= state.forget_named(member, true);
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
        // Connected and named as no other member routed to: it is alive, and the others of
        // its name are its old selves.
        state.gone.retain(|id| *id != far.id);
        state.forget_named(far, false);
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
        // Under the lock, so no `MEMBERS` of another task slips in before the snapshot ends.
        self.interests.add_route(link.connection, control.clone());
        let _ = control.send(members_frame(&self.name, &self.me, &state, None));
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
            ("secret".into(), Value::Bool(self.secret.is_some())),
            ("tls".into(), Value::Bool(self.tls.is_some())),
            ("namespaces".into(), self.info.namespaces.snapshot()),
        ];
        Value::Map(fields)
    }
}

/// Bits of a member id below its start time: random.
const ID_RANDOM_BITS: u32 = 22;

/// A new member's id: the milliseconds since 1970 at its start in the high 42 bits (until
/// 2109), 22 random bits below (never 0), so that of two members of one name the one started
/// later has the larger id.
fn new_id() -> u64 {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
        & ((1 << (64 - ID_RANDOM_BITS)) - 1);
    loop {
        let mut bytes = [0u8; 4];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
            .expect("the operating system's random source");
        let random = u64::from(u32::from_be_bytes(bytes)) & ((1 << ID_RANDOM_BITS) - 1);
        let id = (millis << ID_RANDOM_BITS) | random;
        if id != 0 {
            return id;
        }
    }
}

/// `MEMBERS`: this member and those it knows, or, with a `nonce` (the first of a connection
/// with a secret), this member alone.
fn members_frame(cluster: &str, me: &Member, state: &State, nonce: Option<Vec<u8>>) -> Frame {
    let known = match nonce {
        Some(_) => Vec::new(),
        None => state.known.values().cloned().collect(),
    };
    Frame::Members(Members {
        cluster: cluster.to_string(),
        me: me.clone(),
        known,
        nonce,
    })
}

/// Says who this member is and where the others reach its routes, for the server's banner.
pub fn describe(cluster: &Cluster) -> String {
    format!(
        "member {} ({:016x}) of cluster `{}`, routes on {}",
        cluster.me.name, cluster.me.id, cluster.name, cluster.me.address
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(name: &str) -> Cluster {
        let config = ClusterConfig::new("site", "127.0.0.1:0".parse().unwrap());
        Cluster::new(
            &config,
            name,
            "127.0.0.1:7401".into(),
            RouteGuards::default(),
        )
        .0
    }

    fn member(id: u64, name: &str) -> Member {
        Member {
            id,
            name: name.into(),
            address: format!("10.0.0.{}:7401", id % 200),
        }
    }

    fn names(cluster: &Cluster) -> Vec<(u64, String)> {
        let state = cluster.state();
        state
            .known
            .values()
            .map(|m| (m.id, m.name.clone()))
            .collect()
    }

    #[test]
    fn ids_grow_with_the_start_time() {
        let id = new_id();
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        assert!(
            (id >> ID_RANDOM_BITS).abs_diff(millis) <= 1000,
            "{id:x} at {millis}"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(new_id() > id, "a member started later has a larger id");
    }

    #[test]
    fn of_two_members_of_one_name_the_later_started_is_kept_in_either_order() {
        let a = cluster("a");
        let (old, new) = (member(1 << 24, "b"), member(2 << 24, "b"));
        a.learn(std::slice::from_ref(&old));
        a.learn(std::slice::from_ref(&new));
        assert_eq!(
            names(&a),
            [(new.id, "b".to_string())],
            "the old self forgotten"
        );
        a.learn(std::slice::from_ref(&old));
        assert_eq!(
            names(&a),
            [(new.id, "b".to_string())],
            "and not taken again"
        );
        let c = cluster("c");
        c.learn(&[new.clone(), old.clone()]);
        c.learn(&[old]);
        assert_eq!(
            names(&c),
            [(new.id, "b".to_string())],
            "an old self gossiped later"
        );
    }

    #[test]
    fn a_member_takes_neither_its_own_old_self_nor_itself_but_a_second_of_its_name() {
        let a = cluster("a");
        let older = member(a.me.id - 1, "a");
        let other = member(a.me.id + 1, "a");
        a.learn(&[older, a.me.clone()]);
        assert!(names(&a).is_empty(), "{:?}", names(&a));
        // A second member named `a`, started later: taken, to be refused by the handshake.
        a.learn(std::slice::from_ref(&other));
        assert_eq!(names(&a), [(other.id, "a".to_string())]);
    }
}
