//! What the runtime's tests on PostgreSQL share: a schema of their own in the test
//! database, and a relay to the database that can make the connections it carries go
//! silent.

use super::{Dialect, Pool, SqlValue, Store};
use crate::spec::{FieldKind, FieldSpec, IdKind, ResourceSpec};
use sqlx::AssertSqlSafe;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The URL of a fresh schema `<name>_<process>` of the test database, which the schema's
/// connections search first; `None` (saying so) when `RESTGEN_TEST_DATABASE_URL` is unset.
pub(crate) async fn fresh_schema(name: &str) -> Option<String> {
    let Ok(url) = std::env::var("RESTGEN_TEST_DATABASE_URL") else {
        eprintln!("skipped: RESTGEN_TEST_DATABASE_URL is unset");
        return None;
    };
    let schema = format!("{name}_{}", std::process::id());
    let admin = Store::connect(&url).await.unwrap();
    let fresh = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE; CREATE SCHEMA \"{schema}\"");
    on_pool!(admin, pool => { sqlx::raw_sql(AssertSqlSafe(fresh)).execute(&mut *pool.acquire().await.unwrap()).await.unwrap(); });
    admin.close().await;
    let sep = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{sep}options=-c%20search_path%3D{schema}"))
}

/// Waits until a connection of `store` is idle in its pool: given back, and not in the
/// middle of being given back (a connection whose check goes unanswered then is closed by
/// the pool, whatever else holds it up).
pub(crate) async fn until_idle(store: &Store) {
    let idle = || match &store.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => pool.num_idle(),
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => pool.num_idle(),
    };
    // Bounded from above only so that a regression fails rather than hangs.
    let given_back = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while idle() == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    });
    given_back.await.expect("a connection given back to the pool");
}

/// A relay on loopback between a store and its PostgreSQL that can make the flows it
/// carries go silent: from then on what the store sends is taken and thrown away, so its
/// writes succeed and nothing answers (a NAT or load balancer that forgot the flow, a host
/// gone in a failover), and the socket stays open. Flows opened later are carried as
/// before.
pub(crate) struct Relay {
    flows: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
    sent: Arc<AtomicU64>,
}

impl Relay {
    /// A relay to the database of `url`, and `url` with the relay in the database's place.
    pub(crate) async fn to(url: &str) -> (Relay, String) {
        let mut relayed = reqwest::Url::parse(url).expect("a URL");
        let database = format!("{}:{}", relayed.host_str().expect("a host"), relayed.port().unwrap_or(5432));
        let database = tokio::net::lookup_host(database).await.unwrap().next().expect("the database's address");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let flows: Arc<Mutex<Vec<Arc<AtomicBool>>>> = Arc::default();
        let sent = Arc::new(AtomicU64::new(0));
        tokio::spawn(carry(listener, database, flows.clone(), sent.clone()));
        relayed.set_host(Some("127.0.0.1")).unwrap();
        relayed.set_port(Some(port)).unwrap();
        (Relay { flows, sent }, relayed.to_string())
    }

    /// The bytes the store has sent the database so far, over every flow.
    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    /// Every flow open now goes silent.
    pub(crate) fn silence(&self) {
        for flow in self.flows.lock().unwrap().iter() {
            flow.store(true, Ordering::SeqCst);
        }
    }
}

async fn carry(
    listener: TcpListener,
    database: SocketAddr,
    flows: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
    sent: Arc<AtomicU64>,
) {
    while let Ok((client, _)) = listener.accept().await {
        let Ok(server) = TcpStream::connect(database).await else { continue };
        let silent = Arc::new(AtomicBool::new(false));
        flows.lock().unwrap().push(silent.clone());
        let (mut client_reads, mut client_writes) = client.into_split();
        let (mut server_reads, mut server_writes) = server.into_split();
        let sent = sent.clone();
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut server_reads, &mut client_writes).await;
        });
        tokio::spawn(async move {
            let mut buffer = vec![0; 16 * 1024];
            while let Ok(n @ 1..) = client_reads.read(&mut buffer).await {
                sent.fetch_add(n as u64, Ordering::SeqCst);
                if !silent.load(Ordering::SeqCst) && server_writes.write_all(&buffer[..n]).await.is_err() {
                    break;
                }
            }
        });
    }
}

/// Every kind a column can be read as, a write-only field, an owner, and times.
pub(crate) static KINDS: ResourceSpec = ResourceSpec {
    name: "kinds",
    id: IdKind::Integer,
    owner: Some(("user", IdKind::Uuid)),
    fields: &[
        FieldSpec { name: "s", kind: FieldKind::String, ..FieldSpec::DEFAULT },
        FieldSpec { name: "i", kind: FieldKind::Integer, ..FieldSpec::DEFAULT },
        FieldSpec { name: "n", kind: FieldKind::Number, ..FieldSpec::DEFAULT },
        FieldSpec { name: "b", kind: FieldKind::Boolean, ..FieldSpec::DEFAULT },
        FieldSpec { name: "d", kind: FieldKind::Decimal, ..FieldSpec::DEFAULT },
        FieldSpec { name: "j", kind: FieldKind::Json, ..FieldSpec::DEFAULT },
        FieldSpec { name: "secret", kind: FieldKind::Password, write_only: true, ..FieldSpec::DEFAULT },
        FieldSpec { name: "r", kind: FieldKind::Roles, ..FieldSpec::DEFAULT },
    ],
    ..ResourceSpec::DEFAULT
};

pub(crate) fn kinds_table(dialect: Dialect) -> String {
    let (id, int, float, boolean) = match dialect {
        Dialect::Sqlite => ("INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER", "REAL", "INTEGER"),
        Dialect::Postgres => {
            ("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "BIGINT", "DOUBLE PRECISION", "BOOLEAN")
        }
    };
    format!(
        "CREATE TABLE \"kinds\" (\"id\" {id}, \"owner_id\" TEXT, \"s\" TEXT, \"i\" {int}, \"n\" {float}, \
         \"b\" {boolean}, \"d\" TEXT, \"j\" TEXT, \"secret\" TEXT, \"r\" TEXT, \
         \"created_at\" TEXT NOT NULL, \"updated_at\" TEXT NOT NULL)"
    )
}

pub(crate) fn text(t: &str) -> SqlValue {
    SqlValue::Text(Some(t.to_owned()))
}

/// A store on a fresh schema of its own in the test database; `None` (saying so) when
/// `RESTGEN_TEST_DATABASE_URL` is unset.
pub(crate) async fn postgres_schema(name: &str) -> Option<Store> {
    Some(Store::connect(&fresh_schema(name).await?).await.unwrap())
}
