//! How the service uses its database beside the URL: pool sizes and times, and SQLite's
//! durability, from the environment.

use std::time::Duration;

/// How the service uses its database, beside the URL (`DATABASE_MAX_CONNECTIONS`,
/// `DATABASE_MIN_CONNECTIONS`, `DATABASE_POOL_TIMEOUT`, `DATABASE_IDLE_TIMEOUT`,
/// `DATABASE_MAX_LIFETIME`, `SQLITE_SYNCHRONOUS`; docs/service.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// Connections each instance keeps at most; `None`: 2 per core on SQLite (one writer
    /// at a time, readers beside it), 4 per core on PostgreSQL (queries wait on the network).
    pub max_connections: Option<u32>,
    /// Connections each instance opens at start and keeps open, so that the first requests
    /// after a start (or a quiet spell) wait for no login; 0 opens them as requests need
    /// them. At most the pool's maximum, or the start fails saying so.
    pub min_connections: u32,
    /// How long a query waits for a connection (one to come free, or a new one the
    /// database takes) before it is refused as transient: 503 with `Retry-After`.
    pub pool_timeout: Duration,
    /// How long a connection may sit unused in the pool before it is closed (at the pool's
    /// next sweep, which comes every `idle_timeout` or `max_lifetime`, whichever is
    /// shorter), the least kept open by opening others.
    pub idle_timeout: Duration,
    /// How long a connection is used at most: one older is closed when it is given back,
    /// and a new one opened when needed. Below any limit a proxy, firewall or the database
    /// puts on a connection's life, so that the pool closes it before they do.
    pub max_lifetime: Duration,
    /// SQLite only: whether a commit waits for the disk.
    pub synchronous: Synchronous,
}

/// The default [`StoreOptions::pool_timeout`]: Rails' `checkout_timeout`, and SQLite's wait
/// for the write lock ([`busy`]). sqlx's own is as long as a request may run at all by
/// default ([`restgen_model::model::Limits::REQUEST_TIMEOUT`]), so the request would be cut
/// off before the pool said why; behind a load balancer a refusal in seconds lets the
/// client go elsewhere.
pub(super) const POOL_TIMEOUT: Duration = Duration::from_secs(5);

/// The default [`StoreOptions::idle_timeout`] and [`StoreOptions::max_lifetime`]: sqlx's,
/// named here so that the docs and the settings say the same.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
const MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            max_connections: None,
            min_connections: 0,
            pool_timeout: POOL_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            max_lifetime: MAX_LIFETIME,
            synchronous: Synchronous::default(),
        }
    }
}

/// When a SQLite commit is on disk (`PRAGMA synchronous`, in WAL mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// The write-ahead log is synced at checkpoints, not at each commit: no crash
    /// corrupts the database and a process crash loses nothing committed; a power loss
    /// or kernel crash may lose the last commits. SQLite's advice for WAL, and Rails'.
    #[default]
    Normal,
    /// Every commit waits until it is on disk: nothing committed is lost even to a power
    /// loss, at the cost of a sync per write.
    Full,
}

impl StoreOptions {
    /// The options from the environment: `DATABASE_MAX_CONNECTIONS` (a positive number),
    /// `DATABASE_MIN_CONNECTIONS` (a whole number), `DATABASE_POOL_TIMEOUT`,
    /// `DATABASE_IDLE_TIMEOUT` and `DATABASE_MAX_LIFETIME` (positive seconds, fractions
    /// allowed) and `SQLITE_SYNCHRONOUS` (`normal` or `full`).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<StoreOptions, String> {
        let max_connections = crate::settings::positive_var("DATABASE_MAX_CONNECTIONS", &var, |n: &u32| *n > 0)?;
        let min_connections =
            crate::settings::number_var("DATABASE_MIN_CONNECTIONS", &var, "a whole number", |_: &u32| true)?
                .unwrap_or(0);
        let seconds = |name: &str, default: Duration| {
            let seconds = crate::settings::positive_var(name, &var, |s: &f64| {
                Duration::try_from_secs_f64(*s).is_ok_and(|d| !d.is_zero())
            })?;
            Ok::<_, String>(seconds.map_or(default, Duration::from_secs_f64))
        };
        let pool_timeout = seconds("DATABASE_POOL_TIMEOUT", POOL_TIMEOUT)?;
        let idle_timeout = seconds("DATABASE_IDLE_TIMEOUT", IDLE_TIMEOUT)?;
        let max_lifetime = seconds("DATABASE_MAX_LIFETIME", MAX_LIFETIME)?;
        let synchronous = match var("SQLITE_SYNCHRONOUS").as_deref().map(str::trim) {
            None | Some("normal") => Synchronous::Normal,
            Some("full") => Synchronous::Full,
            Some(other) => return Err(format!("SQLITE_SYNCHRONOUS must be `normal` or `full`, not `{other}`")),
        };
        Ok(StoreOptions { max_connections, min_connections, pool_timeout, idle_timeout, max_lifetime, synchronous })
    }
}
