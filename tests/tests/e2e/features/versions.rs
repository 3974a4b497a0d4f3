//! API versions side by side from one store: the shop serves 1 (deprecated, with a sunset;
//! orders there have `gift_wrap`) and 2 (orders have `note`), named by path, header or
//! media type; the newest when a request names none.

use crate::backends;
use crate::support::accounts::{Account, register};
use crate::support::harness::{Reply, Server};
use serde_json::{Value, json};

const DEPRECATION: &str = "@1796083200";
const SUNSET: &str = "Wed, 30 Jun 2027 00:00:00 GMT";

async fn as_ann(
    s: &Server,
    ann: &Account,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Reply {
    let auth = ann.bearer();
    let mut all = vec![("authorization", auth.as_str())];
    all.extend_from_slice(headers);
    s.send_with(method, path, body, &all).await
}

/// The answer is version 1's: deprecated, with its sunset and its successor.
fn assert_v1(r: &Reply, successor: &str) {
    assert_eq!(r.header("deprecation"), Some(DEPRECATION), "{} {}", r.status, r.text);
    assert_eq!(r.header("sunset"), Some(SUNSET));
    let links: Vec<&str> = r.headers.get_all("link").iter().filter_map(|v| v.to_str().ok()).collect();
    assert!(links.contains(&format!("<{successor}>; rel=\"successor-version\"").as_str()), "{links:?}");
}

fn assert_current(r: &Reply) {
    assert_eq!((r.header("deprecation"), r.header("sunset")), (None, None), "{}", r.text);
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().expect("a record").keys().map(String::as_str).collect()
}

/// A record's fields: its representation without `_links`, which lead within the version
/// the request named (`/api/v1/...` by path) and so differ where the fields do not.
fn fields(v: &Value) -> Value {
    let mut record = v.clone();
    record.as_object_mut().expect("a record").remove("_links");
    record
}

backends!(two_versions_share_one_store, shop::service());
backends!(derived_versions_share_one_store, crate::services::derived_shop::service());
async fn derived_versions_share_one_store(s: Server) {
    two_versions_share_one_store(s).await
}

async fn two_versions_share_one_store(s: Server) {
    let ann = register(&s, "ann").await;

    // Created in version 1, with its own field; the other version's is not its to set.
    let made =
        as_ann(&s, &ann, "POST", "/api/v1/orders", Some(json!({ "total_cents": 500, "gift_wrap": true })), &[]).await;
    assert_eq!(made.status, 201, "{}", made.text);
    assert_v1(&made, "/api/v2/orders");
    let id = made.body["id"].as_str().unwrap().to_owned();
    assert_eq!(made.header("location"), Some(format!("/api/v1/orders/{id}").as_str()));
    assert_eq!(made.body["gift_wrap"], true);
    assert!(!keys(&made.body).contains(&"note"), "{}", made.text);
    let noted = as_ann(&s, &ann, "POST", "/api/v1/orders", Some(json!({ "total_cents": 1, "note": "x" })), &[]).await;
    noted.assert_problem(400);
    assert_eq!(noted.error_fields(), ["note"]);
    assert_v1(&noted, "/api/v2/orders");

    // The same record in version 2: its field, not version 1's; nothing deprecated.
    let v2 = format!("/api/v2/orders/{id}");
    let read = as_ann(&s, &ann, "GET", &v2, None, &[]).await;
    assert_eq!(read.status, 200, "{}", read.text);
    assert_current(&read);
    assert_eq!(read.body["note"], Value::Null);
    assert!(!keys(&read.body).contains(&"gift_wrap"), "{}", read.text);
    as_ann(&s, &ann, "POST", "/api/v2/orders", Some(json!({ "total_cents": 1, "gift_wrap": true })), &[])
        .await
        .assert_problem(400);

    // A write in one version never clears what only the other has.
    let patched = as_ann(&s, &ann, "PATCH", &v2, Some(json!({ "note": "ring twice" })), &[]).await;
    assert_eq!(patched.body["note"], "ring twice", "{}", patched.text);
    let v1 = format!("/api/v1/orders/{id}");
    let replaced = as_ann(&s, &ann, "PUT", &v1, Some(json!({ "gift_wrap": false })), &[]).await;
    assert_eq!((replaced.status, &replaced.body["gift_wrap"]), (200, &json!(false)), "{}", replaced.text);
    assert_eq!(as_ann(&s, &ann, "GET", &v2, None, &[]).await.body["note"], "ring twice", "a v1 PUT kept v2's note");
    let replaced = as_ann(&s, &ann, "PUT", &v2, Some(json!({})), &[]).await;
    assert_eq!((replaced.status, &replaced.body["note"]), (200, &Value::Null), "{}", replaced.text);
    let in_v1 = as_ann(&s, &ann, "PATCH", &v1, Some(json!({ "gift_wrap": true })), &[]).await;
    as_ann(&s, &ann, "PUT", &v2, Some(json!({ "note": "again" })), &[]).await;
    assert_eq!(as_ann(&s, &ann, "GET", &v1, None, &[]).await.body["gift_wrap"], true, "a v2 PUT kept v1's gift_wrap");
    assert_v1(&in_v1, &v2);

    // Filters, sorts and CSV are the version's.
    let wrapped = as_ann(&s, &ann, "GET", "/api/v1/orders?gift_wrap=true", None, &[]).await;
    assert_eq!(wrapped.body["data"].as_array().map(Vec::len), Some(1), "{}", wrapped.text);
    let refused = as_ann(&s, &ann, "GET", "/api/v2/orders?gift_wrap=true", None, &[]).await;
    refused.assert_problem(400);
    assert_eq!(refused.error_fields(), ["gift_wrap"]);
    let csv = as_ann(&s, &ann, "GET", "/api/v1/orders", None, &[("accept", "text/csv")]).await;
    let header = csv.text.lines().next().unwrap_or_default().to_owned();
    assert!(header.contains("gift_wrap") && !header.contains("note"), "{header}");
    assert_v1(&csv, "/api/v2/orders");

    // A request that names no version gets the newest.
    let plain = as_ann(&s, &ann, "GET", &format!("/api/orders/{id}"), None, &[]).await;
    assert_eq!(fields(&plain.body), fields(&as_ann(&s, &ann, "GET", &v2, None, &[]).await.body));
    assert_current(&plain);
}

backends!(a_version_is_named_by_path_header_or_media_type, shop::service());
backends!(a_derived_version_is_named_each_way, crate::services::derived_shop::service());
async fn a_derived_version_is_named_each_way(s: Server) {
    a_version_is_named_by_path_header_or_media_type(s).await
}

async fn a_version_is_named_by_path_header_or_media_type(s: Server) {
    let ann = register(&s, "ann").await;
    let made = as_ann(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 5 })), &[]).await;
    let path = made.header("location").unwrap().to_owned();
    let v1_shape = as_ann(&s, &ann, "GET", &path.replace("/api/", "/api/v1/"), None, &[]).await;
    assert!(keys(&v1_shape.body).contains(&"gift_wrap"));

    // By header: the same answer as by path, and it varies by the header.
    let by_header = as_ann(&s, &ann, "GET", &path, None, &[("x-api-version", "1")]).await;
    assert_eq!(fields(&by_header.body), fields(&v1_shape.body));
    assert_v1(&by_header, &path.replace("/api/", "/api/v2/"));
    let vary: Vec<&str> = by_header.headers.get_all("vary").iter().filter_map(|v| v.to_str().ok()).collect();
    assert!(vary.contains(&"x-api-version") && vary.contains(&"accept"), "{vary:?}");

    // By media type: answered with that type.
    let by_media = as_ann(&s, &ann, "GET", &path, None, &[("accept", "application/vnd.shop.v1+json")]).await;
    assert_eq!(by_media.status, 200, "{}", by_media.text);
    assert_eq!(by_media.header("content-type"), Some("application/vnd.shop.v1+json"));
    assert_eq!(fields(&by_media.body), fields(&v1_shape.body));
    let v2 = as_ann(&s, &ann, "GET", &path, None, &[("accept", "application/vnd.shop.v2+json;q=0.9, */*;q=0.1")]).await;
    assert_eq!(v2.header("content-type"), Some("application/vnd.shop.v2+json"));
    assert_current(&v2);

    // Unknown versions, named each way; and two ways that disagree.
    let unknown = as_ann(&s, &ann, "GET", "/api/v3/orders", None, &[]).await;
    unknown.assert_problem(404);
    assert!(unknown.body["detail"].as_str().unwrap().contains("served: 1, 2"), "{}", unknown.text);
    for bad in ["3", "x", "1.0", ""] {
        let r = as_ann(&s, &ann, "GET", &path, None, &[("x-api-version", bad)]).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), ["X-API-Version"], "{bad}");
    }
    let r = as_ann(&s, &ann, "GET", &path, None, &[("accept", "application/vnd.shop.v9+json")]).await;
    r.assert_problem(406);
    assert!(r.body["detail"].as_str().unwrap().contains("application/vnd.shop.v1+json"), "{}", r.text);
    let both = as_ann(&s, &ann, "GET", &path.replace("/api/", "/api/v1/"), None, &[("x-api-version", "2")]).await;
    both.assert_problem(400);
    let agreed = as_ann(&s, &ann, "GET", &path.replace("/api/", "/api/v1/"), None, &[("x-api-version", "1")]).await;
    assert_eq!(agreed.status, 200);

    // Errors and 304s of a deprecated version say so too; a tag never crosses versions.
    let missing = as_ann(&s, &ann, "GET", "/api/v1/orders/00000000-0000-7000-8000-000000000000", None, &[]).await;
    missing.assert_problem(404);
    assert_v1(&missing, "/api/v2/orders/00000000-0000-7000-8000-000000000000");
    let v1_path = path.replace("/api/", "/api/v1/");
    let tag = v1_shape.header("etag").unwrap().to_owned();
    let not_modified = as_ann(&s, &ann, "GET", &v1_path, None, &[("if-none-match", &tag)]).await;
    assert_eq!(not_modified.status, 304);
    assert_v1(&not_modified, &path.replace("/api/", "/api/v2/"));
    let other = as_ann(&s, &ann, "GET", &path, None, &[("if-none-match", &tag)]).await;
    assert_eq!(other.status, 200, "a v1 tag is not v2's");
    let stale = as_ann(&s, &ann, "PATCH", &path, Some(json!({ "note": "n" })), &[("if-match", &tag)]).await;
    stale.assert_problem(412);

    // Former paths under a version prefix; auth endpoints never are.
    let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let former = format!("{}{}", s.base, path.replace("/api/orders/", "/api/v1/purchases/"));
    let moved = plain.get(former).header("authorization", ann.bearer()).send().await.unwrap();
    let location = moved.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
    assert_eq!((moved.status().as_u16(), location.as_deref()), (301, Some(v1_path.as_str())));
    let login = s.post("/api/v1/auth/login", json!({ "email": ann.email, "password": "x" })).await;
    login.assert_problem(404);
}

backends!(a_version_past_its_sunset_is_gone, shop::service(), settings = crate::support::harness::manual_clock(1000.0));
async fn a_version_past_its_sunset_is_gone(s: Server) {
    let ann = register(&s, "ann").await;
    assert_eq!(as_ann(&s, &ann, "GET", "/api/v1/orders", None, &[]).await.status, 200);
    // The manual clock reads 2027-01-15; the sunset is 2027-06-30.
    s.settings.clock.advance(std::time::Duration::from_secs(170 * 24 * 3600));
    let gone = as_ann(&s, &ann, "GET", "/api/v1/orders", None, &[]).await;
    gone.assert_problem(410);
    assert_v1(&gone, "/api/v2/orders");
    let by_header = as_ann(&s, &ann, "GET", "/api/orders", None, &[("x-api-version", "1")]).await;
    by_header.assert_problem(410);
    assert_eq!(as_ann(&s, &ann, "GET", "/api/v2/orders", None, &[]).await.status, 200);
}

backends!(the_client_picks_its_version_at_construction, shop::service());
async fn the_client_picks_its_version_at_construction(s: Server) {
    use restgen_client::{Auth, Error, Patch};
    use shop_client::{Client, CreateOrder, PatchOrder};
    let ann = register(&s, "ann").await;
    let in_version = |n: Option<u32>| {
        let builder = Client::builder(&s.base).auth(Auth::Bearer(ann.token.clone()));
        match n {
            Some(n) => builder.version(n).build(),
            None => builder.build(),
        }
    };
    let (v1, v2, newest) = (in_version(Some(1)).unwrap(), in_version(Some(2)).unwrap(), in_version(None).unwrap());
    let input =
        CreateOrder { total_cents: 700, customer_id: Patch::Absent, note: Patch::Absent, gift_wrap: Some(true) };
    let order = v1.create_order(&input).await.unwrap();
    assert_eq!((order.gift_wrap, order.note), (Some(true), None));
    let seen = v2.get_order(order.id).await.unwrap();
    assert_eq!((seen.gift_wrap, seen.total_cents), (None, 700), "version 2 has no gift_wrap");
    // The same record; its links lead within the version the client named by path.
    assert_eq!(seen.links["self"].href, format!("/api/v2/orders/{}", order.id));
    let unlinked = |o: shop_client::Order| shop_client::Order { links: Default::default(), ..o };
    assert_eq!(unlinked(newest.get_order(order.id).await.unwrap()), unlinked(seen));
    // A field the chosen version lacks is refused, typed, naming it.
    let refused = v2.update_order(order.id, &PatchOrder { note: Patch::Absent, gift_wrap: Some(false) }).await;
    match refused {
        Err(Error::Api(p)) => assert_eq!((p.status, p.errors[0].field.as_str()), (400, "gift_wrap")),
        other => panic!("expected a 400 naming gift_wrap: {other:?}"),
    }
    assert!(matches!(in_version(Some(3)), Err(Error::Config(_))), "version 3 is not served");
}

/// A catalogue whose versions are named by header and media type only (no path prefix):
/// `reviews` exist from version 2 on, and `blurb` only in version 1.
mod catalogue {
    use restgen::__private::uuid::Uuid;
    use restgen::Resource;
    use restgen::spec::{VersionSpec, VersioningSpec};

    #[derive(Resource, serde::Deserialize)]
    #[resource(path = "/books", access(all = [anyone]))]
    pub struct Book {
        pub id: Uuid,
        #[field(settable, max_length = 100)]
        pub title: String,
        #[field(settable, max_length = 200, until = 2)]
        pub blurb: Option<String>,
    }

    #[derive(Resource, serde::Deserialize)]
    #[resource(path = "/reviews", access(all = [anyone]), since = 2)]
    pub struct Review {
        pub id: Uuid,
        #[field(settable, max_length = 100)]
        pub text: String,
    }

    static VERSIONS: VersioningSpec = VersioningSpec {
        versions: &[
            VersionSpec { number: 1, deprecated: None, sunset: None, media_type: "application/vnd.books.v1+json" },
            VersionSpec { number: 2, deprecated: None, sunset: None, media_type: "application/vnd.books.v2+json" },
        ],
        path: false,
        header: true,
        media_type: true,
        vendor: "books",
    };

    pub fn service() -> restgen::serve::Service {
        restgen::App::new("books")
            .base_path("/api")
            .versions(&VERSIONS)
            .resource::<Book>()
            .resource::<Review>()
            .into_service()
    }
}

backends!(a_resource_outside_a_version_is_not_there, catalogue::service());
async fn a_resource_outside_a_version_is_not_there(s: Server) {
    let v1 = [("x-api-version", "1")];
    let book = s.send_with("POST", "/api/books", Some(json!({ "title": "Emma", "blurb": "A match" })), &v1).await;
    assert_eq!(book.status, 201, "{}", book.text);
    assert_current(&book);
    let path = book.header("location").unwrap().to_owned();
    assert_eq!(path, format!("/api/books/{}", book.body["id"].as_str().unwrap()), "no prefix: versions by header");
    // Version 2 (the newest) has reviews and no blurb; version 1 no reviews.
    let newest = s.get(&path).await;
    assert!(!keys(&newest.body).contains(&"blurb"), "{}", newest.text);
    let review = s.post("/api/reviews", json!({ "text": "Lovely" })).await;
    assert_eq!(review.status, 201, "{}", review.text);
    let review: catalogue::Review = serde_json::from_value(review.body).expect("a review");
    assert_eq!((review.id.get_version_num(), review.text.as_str()), (7, "Lovely"));
    let gone = s.send_with("GET", "/api/reviews", None, &v1).await;
    gone.assert_problem(404);
    assert!(gone.body["detail"].as_str().unwrap().contains("version 1"), "{}", gone.text);
    let by_media = s.send_with("GET", "/api/reviews", None, &[("accept", "application/vnd.books.v1+json")]).await;
    by_media.assert_problem(404);
    let in_v1 = s.send_with("GET", &path, None, &[("accept", "application/vnd.books.v1+json")]).await;
    assert_eq!(in_v1.header("content-type"), Some("application/vnd.books.v1+json"));
    let typed: catalogue::Book = serde_json::from_value(in_v1.body.clone()).expect("version 1's book");
    assert_eq!((typed.title.as_str(), typed.blurb.as_deref()), ("Emma", Some("A match")));
    assert_eq!(typed.id.to_string(), book.body["id"].as_str().unwrap());
    // Paths do not name versions in this service.
    s.get("/api/v1/books").await.assert_problem(404);
    // Its documents: one per version, each with what the version has.
    let v1_doc = s.get("/openapi.v1.json").await.body;
    assert!(v1_doc["paths"].get("/api/reviews").is_none() && v1_doc["paths"].get("/api/books").is_some());
    let v2_doc = s.get("/openapi.v2.json").await.body;
    assert!(v2_doc["paths"].get("/api/reviews").is_some());
    assert!(v2_doc["components"]["schemas"]["Book"]["properties"].get("blurb").is_none());
}
