//! `/docs`: the reference page over each version's document, what it loads, and the
//! policy that keeps it to this service. (The page in a real browser: `.ci/browser`.)

use crate::backends;
use crate::support::harness::Server;
use serde_json::Value;

/// The addresses a page's HTML refers to by `attribute="..."`.
fn references<'a>(html: &'a str, attribute: &str) -> Vec<&'a str> {
    let marker = format!(r#"{attribute}=""#);
    html.match_indices(&marker)
        .map(|(at, _)| &html[at + marker.len()..])
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect()
}

backends!(every_version_has_a_page_that_loads_only_what_this_service_serves, shop::service());
async fn every_version_has_a_page_that_loads_only_what_this_service_serves(s: Server) {
    let newest = s.get("/docs").await;
    assert_eq!(newest.status, 200);
    assert_eq!(newest.header("content-type"), Some("text/html; charset=utf-8"));
    // Nothing runs but the service's own files, and the page calls nothing else.
    let policy = newest.header("content-security-policy").expect("a policy");
    for directive in
        ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]
    {
        assert!(policy.split("; ").any(|d| d == directive), "{directive} in {policy}");
    }
    assert!(!newest.text.contains("<script>"), "no inline script");
    assert_eq!(newest.header("x-content-type-options"), Some("nosniff"));

    // One page per version, each linked from the others, each over its own document.
    let versions =
        references(&newest.text, "href").into_iter().filter(|h| h.starts_with("/docs/v")).collect::<Vec<_>>();
    assert_eq!(versions, ["/docs/v1", "/docs/v2"], "{}", newest.text);
    let documents = |html: &str| references(html, "data-document").into_iter().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(documents(&newest.text), ["/openapi.json"]);
    for (page, document) in versions.iter().zip(["/openapi.v1.json", "/openapi.v2.json"]) {
        let answer = s.get(page).await;
        assert_eq!(answer.status, 200, "{page}");
        assert_eq!(documents(&answer.text), [document], "{page}");
        assert!(answer.text.contains(&format!(r#"<a href="{page}" aria-current="page">"#)), "{page} marks itself");
        let served: Value = s.get(document).await.body;
        assert_eq!(served["openapi"], "3.1.0", "{page} reads a document the service serves");
    }

    // Every script and style the page loads is served here, typed, and not sniffed.
    let assets: Vec<&str> = references(&newest.text, "src")
        .into_iter()
        .chain(references(&newest.text, "href").into_iter().filter(|h| h.starts_with("/docs/assets/")))
        .collect();
    assert_eq!(assets.len(), 4, "{assets:?}");
    for asset in assets {
        let answer = s.get(asset).await;
        assert_eq!(answer.status, 200, "{asset}");
        let media = if asset.ends_with(".js") { "text/javascript; charset=utf-8" } else { "text/css; charset=utf-8" };
        assert_eq!(answer.header("content-type"), Some(media), "{asset}");
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"), "{asset}");
        assert!(!answer.text.is_empty(), "{asset}");
    }

    // `/docs/` as people type it; a version the service does not serve has no page.
    // (The harness's client follows the redirect.)
    let slash = s.get("/docs/").await;
    assert_eq!((slash.status, documents(&slash.text)), (200, vec!["/openapi.json".to_owned()]));
    assert_eq!(s.get("/docs/v3").await.status, 404);
}

backends!(a_service_with_docs_off_serves_no_page, fleet::service());
async fn a_service_with_docs_off_serves_no_page(s: Server) {
    assert_eq!(s.get("/openapi.json").await.status, 200, "the document stays");
    for path in ["/docs", "/docs/assets/swagger-ui-bundle.js", "/docs/assets/docs.js"] {
        let answer = s.get(path).await;
        assert_eq!(answer.status, 404, "{path}");
        assert_eq!(answer.header("content-type"), Some("application/problem+json"), "{path}");
    }
}
