//! Cross-origin requests: the shop lets `https://shop.example.com` in (its `cors`), the
//! fleet declares no `cors` and lets no other origin in.

use crate::backends;
use crate::support::accounts::{call, register};
use crate::support::harness::{Reply, Server};

const SHOP_ORIGIN: &str = "https://shop.example.com";

async fn preflight(s: &Server, path: &str, origin: &str) -> Reply {
    s.send_with(
        "OPTIONS",
        path,
        None,
        &[
            ("origin", origin),
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "authorization,content-type,idempotency-key,x-api-key,traceparent,tracestate",
            ),
        ],
    )
    .await
}

/// Every value of a list header, over all its lines (`Vary` may come in several).
fn list(r: &Reply, name: &str) -> Vec<String> {
    let lines = r.headers.get_all(name).iter().filter_map(|v| v.to_str().ok());
    lines.flat_map(|line| line.split(',')).map(|v| v.trim().to_ascii_lowercase()).collect()
}

backends!(an_allowed_origin_passes_preflight_and_reads_every_answer, shop::service());
async fn an_allowed_origin_passes_preflight_and_reads_every_answer(s: Server) {
    // The preflight is answered before routing and auth: no credentials, no 401 or 405.
    let p = preflight(&s, "/api/orders", SHOP_ORIGIN).await;
    assert!(p.status == 200 || p.status == 204, "{} {}", p.status, p.text);
    assert_eq!(p.header("access-control-allow-origin"), Some(SHOP_ORIGIN));
    assert!(list(&p, "access-control-allow-methods").contains(&"post".to_owned()));
    // A page's OpenTelemetry sends the trace's headers.
    for h in ["authorization", "content-type", "idempotency-key", "x-api-key", "traceparent", "tracestate"] {
        assert!(list(&p, "access-control-allow-headers").contains(&h.to_owned()), "{h}");
    }
    assert_eq!(p.header("access-control-max-age"), Some("600"), "cors.max_age: 10m");
    assert!(p.header("access-control-allow-credentials").is_none(), "credentials travel in headers, not cookies");

    // Real answers, success and error alike, can be read by that origin's scripts.
    let ann = register(&s, "ann").await;
    let origin = [("origin", SHOP_ORIGIN)];
    let denied = s.send_with("GET", "/api/orders", None, &origin).await;
    denied.assert_problem(401);
    assert_eq!(denied.header("access-control-allow-origin"), Some(SHOP_ORIGIN));
    let created = s
        .send_with(
            "POST",
            "/api/orders",
            Some(serde_json::json!({ "total_cents": 100 })),
            &[("origin", SHOP_ORIGIN), ("authorization", &ann.bearer())],
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.header("access-control-allow-origin"), Some(SHOP_ORIGIN));
    for exposed in ["location", "x-request-id"] {
        assert!(list(&created, "access-control-expose-headers").contains(&exposed.to_owned()), "{exposed}");
    }
    assert!(list(&created, "vary").iter().any(|v| v == "origin"), "caches keep origins apart");
    // Without an Origin it is not a CORS request: no CORS headers.
    let plain = call(&s, &ann, "GET", "/api/orders", None).await;
    assert_eq!(plain.status, 200);
    assert!(plain.header("access-control-allow-origin").is_none());
}

backends!(another_origin_gets_no_cors_headers, shop::service());
async fn another_origin_gets_no_cors_headers(s: Server) {
    let p = preflight(&s, "/api/orders", "https://evil.example").await;
    assert!(p.header("access-control-allow-origin").is_none(), "{:?}", p.headers);
    let r = s.send_with("GET", "/api/users", None, &[("origin", "https://evil.example")]).await;
    assert!(r.header("access-control-allow-origin").is_none());
}

backends!(a_service_without_cors_lets_no_origin_in, fleet::service());
async fn a_service_without_cors_lets_no_origin_in(s: Server) {
    let p = preflight(&s, "/v0/depots", "https://shop.example.com").await;
    assert!(p.header("access-control-allow-origin").is_none());
    let r = s.send_with("GET", "/v0/depots", None, &[("origin", "https://shop.example.com")]).await;
    assert_eq!(r.status, 200);
    assert!(r.header("access-control-allow-origin").is_none());
}
