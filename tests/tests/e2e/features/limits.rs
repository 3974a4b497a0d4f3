//! The request time limit (`limits.request_timeout`): a request still running at its limit
//! is stopped and answered 503 as a problem, no sooner, whatever stands around the routes,
//! while a request beside it is answered as ever. Nothing but the limit wakes a handler
//! that waits for good.

use crate::backends;
use crate::services::derived::List;
use crate::support::harness::Server;
use restgen::__private::axum::{Router, routing::get};
use restgen::App;
use restgen::serve::{CorsSpec, Service};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_millis(400);

/// A service limited to [`LIMIT`] with a route that never answers; with `cors`, the CORS
/// layer stands around the frame (without it the frame is the whole stack).
fn service(cors: bool) -> Service {
    let stuck = Router::new().route("/api/stuck", get(std::future::pending::<()>));
    let app = App::new("limited").base_path("/api").resource::<List>().routes(stuck).limits(16 * 1024, LIMIT, None);
    let app =
        if cors { app.cors(CorsSpec { allowed_origins: &["https://app.example.com"], max_age: None }) } else { app };
    app.into_service()
}

async fn stuck_requests_are_stopped_at_the_limit(s: Server) {
    let started = Instant::now();
    let stuck = futures_util::future::join_all((0..4).map(|_| s.get("/api/stuck")));
    let (stuck, listed) = tokio::join!(stuck, s.get("/api/lists"));
    let stopped_after = started.elapsed();
    assert_eq!(listed.status, 200, "{}", listed.text);
    for r in stuck {
        r.assert_problem(503);
        assert!(r.body["detail"].as_str().unwrap().contains("took too long"), "{}", r.text);
    }
    assert!(stopped_after >= LIMIT, "stopped after {stopped_after:?}, before the limit");
}

backends!(a_request_past_its_limit_is_503_with_nothing_around_the_frame, service(false));
async fn a_request_past_its_limit_is_503_with_nothing_around_the_frame(s: Server) {
    stuck_requests_are_stopped_at_the_limit(s).await;
}

backends!(a_request_past_its_limit_is_503_with_cors_around_the_frame, service(true));
async fn a_request_past_its_limit_is_503_with_cors_around_the_frame(s: Server) {
    stuck_requests_are_stopped_at_the_limit(s).await;
}
