//! Who owns each namespace of information objects in a cluster, as leases held in Cassandra
//! with lightweight transactions, and the latest value of every object of a leased
//! namespace, so that the member that takes a lease over serves what the last owner wrote.
//!
//! ```text
//! info_leases  ((namespace)) -> owner, member        one row per namespace, with a TTL
//! info_objects ((namespace), name) -> object         the objects' latest values
//! ```
//!
//! A lease is taken with `INSERT … IF NOT EXISTS USING TTL`, kept with `UPDATE … USING TTL
//! … IF member = ?` and read at serial consistency: Cassandra's Paxos decides, so two
//! members never both hold one (no home-made consensus). A holder that stops renewing loses
//! the lease when its TTL runs out, and the next member to try takes it.
//!
//! Unlike [`CqlBackend`](super::CqlBackend), this is async and meant for the server's own
//! runtime (the driver's connections run on it).

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use scylla::value::{CqlValue, Row};

use super::errors::{execution_error, prepare_error, rows_error, session_error};
use super::options::CqlOptions;
use crate::error::ArchiveError;

/// Who holds a namespace's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The member's server name.
    pub owner: String,
    /// The member's id (random, per start).
    pub member: u64,
}

/// The leases and the objects of leased namespaces.
pub struct InfoLeases {
    session: Session,
    take: PreparedStatement,
    renew: PreparedStatement,
    holder: PreparedStatement,
    release: PreparedStatement,
    put: PreparedStatement,
    delete: PreparedStatement,
    load: PreparedStatement,
}

impl std::fmt::Debug for InfoLeases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfoLeases").finish_non_exhaustive()
    }
}

impl InfoLeases {
    /// Connects, creates the keyspace and the two tables if missing, and prepares the
    /// statements. Call it from inside a tokio runtime, which then runs the connections.
    ///
    /// # Errors
    /// `Unavailable` if no contact point answers, else `Io` naming what failed.
    pub async fn connect(options: &CqlOptions) -> Result<InfoLeases, ArchiveError> {
        super::schema::check_keyspace_name(&options.keyspace)?;
        let session = SessionBuilder::new()
            .known_nodes(&options.contact_points)
            .build()
            .await
            .map_err(|err| session_error(&options.contact_points, err))?;
        let ks = &options.keyspace;
        let replication = options.replication_factor.max(1);
        for cql in [
            format!(
                "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = \
                 {{'class': 'SimpleStrategy', 'replication_factor': {replication}}}"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {ks}.info_leases (namespace text PRIMARY KEY, \
                 owner text, member bigint)"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {ks}.info_objects (namespace text, name text, \
                 object blob, PRIMARY KEY ((namespace), name))"
            ),
        ] {
            super::schema::schema_change(&session, cql).await?;
        }
        let prepare = |cql: String, consistency: Consistency| {
            let session = &session;
            async move {
                let mut statement = session
                    .prepare(cql.as_str())
                    .await
                    .map_err(|err| prepare_error(&cql, &err))?;
                statement.set_consistency(consistency);
                Ok::<_, ArchiveError>(statement)
            }
        };
        let quorum = Consistency::Quorum;
        Ok(InfoLeases {
            take: prepare(
                format!(
                    "INSERT INTO {ks}.info_leases (namespace, owner, member) VALUES (?, ?, ?) \
                     IF NOT EXISTS USING TTL ?"
                ),
                quorum,
            )
            .await?,
            renew: prepare(
                format!(
                    "UPDATE {ks}.info_leases USING TTL ? SET owner = ? \
                     WHERE namespace = ? IF member = ?"
                ),
                quorum,
            )
            .await?,
            holder: prepare(
                format!("SELECT owner, member FROM {ks}.info_leases WHERE namespace = ?"),
                Consistency::Serial,
            )
            .await?,
            release: prepare(
                format!("DELETE FROM {ks}.info_leases WHERE namespace = ? IF member = ?"),
                quorum,
            )
            .await?,
            put: prepare(
                format!("INSERT INTO {ks}.info_objects (namespace, name, object) VALUES (?, ?, ?)"),
                quorum,
            )
            .await?,
            delete: prepare(
                format!("DELETE FROM {ks}.info_objects WHERE namespace = ? AND name = ?"),
                quorum,
            )
            .await?,
            load: prepare(
                format!("SELECT object FROM {ks}.info_objects WHERE namespace = ?"),
                quorum,
            )
            .await?,
            session,
        })
    }

    /// Takes the lease of `namespace` for `ttl_seconds` if nobody holds it, or renews it if
    /// `me` holds it; returns who holds it afterwards.
    ///
    /// # Errors
    /// The store's error (unreachable, timed out).
    pub async fn hold(
        &self,
        namespace: &str,
        me: &Holder,
        ttl_seconds: i32,
    ) -> Result<Holder, ArchiveError> {
        let member = me.member as i64;
        let taken = self
            .applied(
                &self.take,
                (namespace, me.owner.as_str(), member, ttl_seconds),
                "taking a lease",
            )
            .await?;
        if taken {
            return Ok(me.clone());
        }
        let current = self.holder(namespace).await?;
        if current.as_ref().is_some_and(|h| h.member == me.member) {
            let renewed = self
                .applied(
                    &self.renew,
                    (ttl_seconds, me.owner.as_str(), namespace, member),
                    "renewing a lease",
                )
                .await?;
            if renewed {
                return Ok(me.clone());
            }
        }
        // Held by another, or it expired between the two statements: the next round tries.
        Ok(self.holder(namespace).await?.unwrap_or_else(|| Holder {
            owner: String::new(),
            member: 0,
        }))
    }

    /// Returns who holds the lease of `namespace`, if anyone.
    ///
    /// # Errors
    /// The store's error.
    pub async fn holder(&self, namespace: &str) -> Result<Option<Holder>, ArchiveError> {
        let what = "reading a lease";
        let rows = self
            .session
            .execute_unpaged(&self.holder, (namespace,))
            .await
            .map_err(|err| execution_error(what, &err))?
            .into_rows_result()
            .map_err(|err| rows_error(what, err))?;
        let row = rows
            .maybe_first_row::<(Option<String>, Option<i64>)>()
            .map_err(|err| rows_error(what, err))?;
        Ok(row.and_then(|(owner, member)| {
            Some(Holder {
                owner: owner?,
                member: member? as u64,
            })
        }))
    }

    /// Gives the lease of `namespace` up, if `me` holds it.
    ///
    /// # Errors
    /// The store's error.
    pub async fn release(&self, namespace: &str, me: &Holder) -> Result<(), ArchiveError> {
        self.applied(
            &self.release,
            (namespace, me.member as i64),
            "releasing a lease",
        )
        .await
        .map(|_| ())
    }

    /// Keeps the latest value of object `name` of `namespace` (its encoding is the caller's).
    ///
    /// # Errors
    /// The store's error.
    pub async fn put(
        &self,
        namespace: &str,
        name: &str,
        object: &[u8],
    ) -> Result<(), ArchiveError> {
        self.session
            .execute_unpaged(&self.put, (namespace, name, object))
            .await
            .map_err(|err| execution_error("keeping an information object", &err))?;
        Ok(())
    }

    /// Forgets object `name` of `namespace`.
    ///
    /// # Errors
    /// The store's error.
    pub async fn delete(&self, namespace: &str, name: &str) -> Result<(), ArchiveError> {
        self.session
            .execute_unpaged(&self.delete, (namespace, name))
            .await
            .map_err(|err| execution_error("forgetting an information object", &err))?;
        Ok(())
    }

    /// Returns every object kept for `namespace`.
    ///
    /// # Errors
    /// The store's error.
    pub async fn load(&self, namespace: &str) -> Result<Vec<Vec<u8>>, ArchiveError> {
        let what = "loading a namespace's objects";
        let rows = self
            .session
            .execute_unpaged(&self.load, (namespace,))
            .await
            .map_err(|err| execution_error(what, &err))?
            .into_rows_result()
            .map_err(|err| rows_error(what, err))?;
        let objects = rows
            .rows::<(Vec<u8>,)>()
            .map_err(|err| rows_error(what, err))?
            .map(|row| row.map(|(object,)| object))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| rows_error(what, err))?;
        Ok(objects)
    }

    /// Runs a lightweight transaction; returns whether it applied (its first column).
    async fn applied(
        &self,
        statement: &PreparedStatement,
        values: impl scylla::serialize::row::SerializeRow,
        what: &str,
    ) -> Result<bool, ArchiveError> {
        let rows = self
            .session
            .execute_unpaged(statement, values)
            .await
            .map_err(|err| execution_error(what, &err))?
            .into_rows_result()
            .map_err(|err| rows_error(what, err))?;
        let row = rows
            .maybe_first_row::<Row>()
            .map_err(|err| rows_error(what, err))?;
        Ok(matches!(
            row.and_then(|r| r.columns.into_iter().next().flatten()),
            Some(CqlValue::Boolean(true))
        ))
    }
}
