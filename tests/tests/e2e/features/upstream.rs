//! A business rule that calls another service: when the upstream gives an answer the rule
//! cannot use, the write is a 502; when it does not answer in time, a 504; either way as
//! problem+json, and nothing is written.

use crate::backends;
use crate::support::harness::Server;
use restgen::routes::Hooks;
use restgen::{App, Problem, Resource};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// A shipment, priced by a carrier when it is booked.
#[derive(Resource, serde::Serialize, serde::Deserialize)]
#[resource(path = "/shipments", access(all = [anyone]))]
pub struct Shipment {
    pub id: i64,
    #[field(settable, min_length = 1, max_length = 20)]
    pub parcel: String,
    /// The carrier's price, never the client's.
    #[field(default = 0, min = 0)]
    pub price_cents: i64,
}

/// How long the rule waits for the carrier.
const PATIENCE: Duration = Duration::from_millis(300);

/// A carrier on loopback, one line per question: `price 1200` for a `small` parcel, a
/// line it cannot read for an `odd` one, and for a `heavy` one no answer at all (it reads
/// until the caller gives up).
fn carrier() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("a stream"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let mut stream = stream;
                let _ = match line.trim() {
                    "small" => writeln!(stream, "price 1200"),
                    "heavy" => std::io::copy(&mut reader, &mut std::io::sink()).map(drop),
                    _ => writeln!(stream, "?!"),
                };
            });
        }
    });
    addr
}

/// The rule: ask the carrier for the parcel's price.
fn priced(carrier: SocketAddr, shipment: &mut Shipment) -> Result<(), Problem> {
    let refused = |_| Problem::bad_gateway("the carrier could not be reached");
    let mut stream = TcpStream::connect_timeout(&carrier, PATIENCE).map_err(refused)?;
    stream.set_read_timeout(Some(PATIENCE)).map_err(refused)?;
    writeln!(stream, "{}", shipment.parcel).map_err(refused)?;
    let mut answer = String::new();
    match BufReader::new(stream).read_line(&mut answer) {
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
            return Err(Problem::gateway_timeout("the carrier did not quote a price in time"));
        }
        Err(_) => return Err(Problem::bad_gateway("the carrier broke off")),
        Ok(_) => {}
    }
    let price = answer.trim().strip_prefix("price ").and_then(|p| p.parse().ok());
    shipment.price_cents = price.ok_or_else(|| Problem::bad_gateway("the carrier's answer is not a price"))?;
    Ok(())
}

fn service() -> restgen::serve::Service {
    let carrier = carrier();
    App::new("shipping")
        .base_path("/api")
        .resource_with::<Shipment>(Hooks::default().compute(move |s: &mut Shipment| priced(carrier, s)))
        .into_service()
}

backends!(an_upstream_that_fails_is_a_502_and_one_that_is_silent_a_504, service());
async fn an_upstream_that_fails_is_a_502_and_one_that_is_silent_a_504(s: Server) {
    let booked = s.post("/api/shipments", json!({ "parcel": "small" })).await;
    assert_eq!((booked.status, booked.body["price_cents"].as_i64()), (201, Some(1200)), "{}", booked.text);

    let odd = s.post("/api/shipments", json!({ "parcel": "odd" })).await;
    odd.assert_problem(502);
    assert_eq!(odd.body["title"], "Bad Gateway");
    assert_eq!(odd.body["detail"], "the carrier's answer is not a price");

    let heavy = s.post("/api/shipments", json!({ "parcel": "heavy" })).await;
    heavy.assert_problem(504);
    assert_eq!(heavy.body["title"], "Gateway Timeout");

    // A change is priced again, and refused the same way.
    let path = format!("/api/shipments/{}", booked.body["id"]);
    s.send("PATCH", &path, Some(json!({ "parcel": "heavy" }))).await.assert_problem(504);

    // Nothing the carrier did not price was written.
    let all = s.get("/api/shipments").await;
    assert_eq!(all.body["data"].as_array().map(Vec::len), Some(1), "{}", all.text);
    assert_eq!(s.get(&path).await.body["parcel"], "small");
}
