//! `/docs`: the reference page a person reads and calls the API from, Swagger UI over the
//! service's own OpenAPI documents. Its files are embedded at build time (as the npm
//! registry's `swagger-ui-dist` publishes them: `.ci/swagger-ui`), so the page works
//! offline and loads nothing from elsewhere; its `Content-Security-Policy` lets it run
//! only those files and call only this service.

use crate::store::Store;
use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use restgen_model::bounds::{DOCS_PATH, document_path};
use restgen_wire::http::media;

/// Where the page's files are served, under [`DOCS_PATH`].
const ASSETS: &str = "/docs/assets";

/// Scripts, styles and calls from this origin alone; no inline script or style, no frame,
/// no form posted elsewhere. Swagger UI draws its icons as `data:` images.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The files the page loads: name, media type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    ("swagger-ui-bundle.js", media::JAVASCRIPT, include_bytes!("../assets/swagger-ui/swagger-ui-bundle.js")),
    ("swagger-ui.css", media::CSS, include_bytes!("../assets/swagger-ui/swagger-ui.css")),
    ("docs.js", media::JAVASCRIPT, include_bytes!("../assets/docs.js")),
    ("docs.css", media::CSS, include_bytes!("../assets/docs.css")),
];

/// One page of the reference: a version's document (`None` without versions) at `path`.
struct Page {
    path: String,
    document: String,
    version: Option<u32>,
}

/// The page and its files: `/docs` reads `/openapi.json` (with versions, the newest's), and
/// with versions `/docs/v{n}` reads `/openapi.v{n}.json`; each page links to the others.
pub(crate) fn routes(name: &str, versions: &[u32]) -> Router<Store> {
    let mut pages = vec![Page { path: DOCS_PATH.to_owned(), document: document_path(None, false), version: None }];
    pages.extend(versions.iter().map(|n| Page {
        path: format!("{DOCS_PATH}/v{n}"),
        document: document_path(Some(*n), false),
        version: Some(*n),
    }));
    let newest = versions.iter().max().copied();
    let mut router = Router::new();
    for page in &pages {
        let html = render(name, page, &pages, newest);
        router = router.route(&page.path, axum::routing::get(move || async move { answer_page(html) }));
    }
    // `/docs/` as people type it.
    router = router.route(&format!("{DOCS_PATH}/"), axum::routing::get(|| async { Redirect::permanent(DOCS_PATH) }));
    for &(file, media, bytes) in FILES {
        router = router.route(
            &format!("{ASSETS}/{file}"),
            axum::routing::get(move || async move {
                let mut answer = bytes.into_response();
                let headers = answer.headers_mut();
                headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
                // Revalidated after a day: the files change only with the runtime.
                headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
                headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
                answer
            }),
        );
    }
    router
}

fn answer_page(html: String) -> Response {
    let mut answer = html.into_response();
    let headers = answer.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media::HTML));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    answer
}

/// The page's HTML: no inline script (the policy allows none), the document's address in
/// a `data-` attribute that `docs.js` hands to Swagger UI.
fn render(name: &str, page: &Page, pages: &[Page], newest: Option<u32>) -> String {
    let name = escape(name);
    // One link per version; `/docs` is the newest's page under its short name.
    let shown = page.version.or(newest);
    let links: Vec<String> = pages
        .iter()
        .filter_map(|p| p.version)
        .map(|n| {
            let current = if shown == Some(n) { r#" aria-current="page""# } else { "" };
            let newest = if newest == Some(n) { " (newest)" } else { "" };
            format!(r#"<a href="{DOCS_PATH}/v{n}"{current}>v{n}{newest}</a>"#)
        })
        .collect();
    let nav = if links.is_empty() {
        String::new()
    } else {
        format!(r#"<nav class="restgen-versions" aria-label="API versions">Versions: {}</nav>"#, links.join(" "))
    };
    let heading = match page.version {
        Some(n) => format!("{name} API v{n}"),
        None => format!("{name} API"),
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{heading}: reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">
<link rel="stylesheet" href="{ASSETS}/docs.css">
</head>
<body>
{nav}
<main id="reference" data-document="{document}"></main>
<script src="{ASSETS}/swagger-ui-bundle.js"></script>
<script src="{ASSETS}/docs.js"></script>
</body>
</html>
"#,
        document = escape(&page.document),
    )
}

/// Text in HTML, as text: a service's name never becomes markup.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_link_each_version_and_mark_their_own() {
        let pages = vec![
            Page { path: "/docs".into(), document: "/openapi.json".into(), version: None },
            Page { path: "/docs/v1".into(), document: "/openapi.v1.json".into(), version: Some(1) },
            Page { path: "/docs/v2".into(), document: "/openapi.v2.json".into(), version: Some(2) },
        ];
        let html = render("shop", &pages[1], &pages, Some(2));
        assert!(html.contains(r#"data-document="/openapi.v1.json""#), "{html}");
        assert!(html.contains(r#"<a href="/docs/v1" aria-current="page">v1</a>"#), "{html}");
        assert!(html.contains(r#"<a href="/docs/v2">v2 (newest)</a>"#), "{html}");
        assert!(!html.contains("<script>"), "no inline script: the policy would refuse it");
        // `/docs` is the newest version's page.
        let html = render("shop", &pages[0], &pages, Some(2));
        assert!(html.contains(r#"data-document="/openapi.json""#), "{html}");
        assert!(html.contains(r#"<a href="/docs/v2" aria-current="page">v2 (newest)</a>"#), "{html}");
    }

    #[test]
    fn a_page_without_versions_has_no_version_links() {
        let pages = vec![Page { path: "/docs".into(), document: "/openapi.json".into(), version: None }];
        let html = render("shop", &pages[0], &pages, None);
        assert!(!html.contains("<nav"), "{html}");
        assert!(html.contains("<title>shop API: reference</title>"), "{html}");
    }

    #[test]
    fn a_name_is_text_never_markup() {
        let pages = vec![Page { path: "/docs".into(), document: "/openapi.json".into(), version: None }];
        let html = render("<script>alert(1)</script>", &pages[0], &pages, None);
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
    }
}
