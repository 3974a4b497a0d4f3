//! A relay on loopback between a service and its PostgreSQL that can take the database
//! away: every connection it carries cut, and new ones closed as they come, until it is
//! told to carry them again. What a service meets when its database restarts or fails
//! over, without restarting the database every other test shares.

use restgen::__private::tokio;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct Relay {
    down: Arc<AtomicBool>,
    /// Bumped at each cut: the flows of an earlier generation end.
    cut: watch::Sender<u64>,
    generation: Arc<AtomicU64>,
}

impl Relay {
    /// A relay to the database of `url`, and `url` with the relay in the database's place.
    pub async fn to(url: &str) -> (Relay, String) {
        let mut relayed = reqwest::Url::parse(url).expect("a URL");
        let database = format!("{}:{}", relayed.host_str().expect("a host"), relayed.port().unwrap_or(5432));
        let database = tokio::net::lookup_host(database).await.unwrap().next().expect("the database's address");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let down = Arc::new(AtomicBool::new(false));
        let (cut, _) = watch::channel(0);
        let relay = Relay { down: down.clone(), cut: cut.clone(), generation: Arc::new(AtomicU64::new(0)) };
        tokio::spawn(carry(listener, database, down, cut));
        relayed.set_host(Some("127.0.0.1")).unwrap();
        relayed.set_port(Some(port)).unwrap();
        (relay, relayed.to_string())
    }

    /// The database goes away: every flow is cut, and new connections are closed at once.
    pub fn take_down(&self) {
        self.down.store(true, Ordering::SeqCst);
        let next = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = self.cut.send(next);
    }

    /// The database is back: new connections are carried.
    pub fn bring_back(&self) {
        self.down.store(false, Ordering::SeqCst);
    }
}

async fn carry(listener: TcpListener, database: SocketAddr, down: Arc<AtomicBool>, cut: watch::Sender<u64>) {
    while let Ok((client, _)) = listener.accept().await {
        if down.load(Ordering::SeqCst) {
            drop(client);
            continue;
        }
        let Ok(server) = TcpStream::connect(database).await else { continue };
        let mut cut = cut.subscribe();
        let born = *cut.borrow();
        tokio::spawn(async move {
            let (mut client, mut server) = (client, server);
            tokio::select! {
                _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                _ = cut.wait_for(|generation| *generation > born) => {}
            }
        });
    }
}
