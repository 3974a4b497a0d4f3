//! Content negotiation: `Accept` picks among a resource's `formats`, CSV answers items and
//! lists, every representation has its own tag, nothing acceptable is a 406, and errors
//! stay problem+json whatever `Accept` says.

use crate::backends;
use crate::support::accounts::{call, register};
use crate::support::harness::{Reply, Server};
use restgen::serve::Service;
use serde_json::{Value, json};

const CSV: &str = "text/csv; charset=utf-8; header=present";

/// A CSV answer as its header row and its rows.
fn table(r: &Reply) -> (Vec<String>, Vec<Vec<String>>) {
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.header("content-type"), Some(CSV), "{}", r.text);
    assert_eq!(r.header("vary"), Some("accept"));
    assert!(r.text.ends_with("\r\n"), "CRLF line ends: {:?}", r.text);
    let mut reader = csv::ReaderBuilder::new().from_reader(r.text.as_bytes());
    let header = reader.headers().expect("a header row").iter().map(str::to_owned).collect();
    let rows = reader.records().map(|row| row.expect("RFC 4180").iter().map(str::to_owned).collect()).collect();
    (header, rows)
}

/// The cell a JSON value of `column` becomes: nulls empty, nested values as JSON text,
/// numbers and booleans as written, text that starts like a formula behind a `'`.
fn cell(column: &str, v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) if column != "id" && column != "owner_id" && s.starts_with(['=', '+', '-', '@']) => {
            format!("'{s}")
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The row a record's JSON representation makes, under `header`, which must be its keys
/// in order (its fields: `_links` are hypermedia, not a column).
fn row_of(header: &[String], record: &Value) -> Vec<String> {
    let keys: Vec<&String> = record.as_object().expect("a record").keys().filter(|k| *k != "_links").collect();
    assert_eq!(header.iter().collect::<Vec<_>>(), keys, "the header is the representation's fields in order");
    keys.iter().map(|k| cell(k, &record[k.as_str()])).collect()
}

backends!(orders_download_as_csv_page_by_page, shop::service());
async fn orders_download_as_csv_page_by_page(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = ann.bearer();
    let notes = ["=HYPERLINK(\"http://evil.example\",\"x\")", "two, \"quoted\"\r\nlines", "-1+2", "@SUM(A1)"];
    let mut made = Vec::new();
    for (i, note) in notes.iter().enumerate() {
        let r = call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 100 + i, "note": note }))).await;
        assert_eq!(r.status, 201, "{}", r.text);
        made.push(r.body);
    }
    let csv_get = |path: String| {
        let auth = auth.clone();
        let s = &s;
        async move { s.send_with("GET", &path, None, &[("authorization", &auth), ("accept", "text/csv")]).await }
    };

    // Every record, a row of its JSON representation; the formula-like notes neutralised.
    let all = csv_get("/api/orders?limit=100&sort=created_at_asc".into()).await;
    let (header, rows) = table(&all);
    assert_eq!(rows.len(), made.len());
    for (row, record) in rows.iter().zip(&made) {
        assert_eq!(row, &row_of(&header, record));
    }
    assert!(rows[0].iter().any(|c| c.starts_with("'=HYPERLINK")), "{rows:?}");

    // Paging in `Link`, as for JSON: the next page is CSV again when asked for.
    let first = csv_get("/api/orders?limit=3&sort=created_at_asc".into()).await;
    let (_, page) = table(&first);
    assert_eq!(page.len(), 3);
    let link = first.header("link").expect("a next page");
    let next = link.trim_start_matches('<').split('>').next().unwrap().to_owned();
    let (_, rest) = table(&csv_get(next).await);
    assert_eq!(rest, rows[3..]);

    // An item: a header row and one row.
    let path = format!("/api/orders/{}", made[1]["id"].as_str().unwrap());
    let item = csv_get(path.clone()).await;
    let (header, one) = table(&item);
    assert_eq!(one, [row_of(&header, &made[1])]);

    // The nested list of the owner's orders.
    let nested = csv_get(format!("/api/users/{}/orders", ann.id)).await;
    assert_eq!(table(&nested).1.len(), made.len());

    // Each representation has its tag: one never stands for the other.
    let json = s.send_with("GET", &path, None, &[("authorization", &auth)]).await;
    assert_eq!(json.header("content-type"), Some("application/json"));
    assert_eq!(json.header("vary"), Some("accept"));
    let (json_tag, csv_tag) = (json.header("etag").unwrap(), item.header("etag").unwrap());
    assert_ne!(json_tag, csv_tag);
    let as_csv = |held: &str| {
        let (auth, held) = (auth.clone(), held.to_owned());
        let (s, path) = (&s, path.clone());
        async move {
            s.send_with(
                "GET",
                &path,
                None,
                &[("authorization", &auth), ("accept", "text/csv"), ("if-none-match", &held)],
            )
            .await
        }
    };
    let stale = as_csv(json_tag).await;
    assert_eq!((stale.status, stale.header("etag")), (200, Some(csv_tag)));
    let fresh = as_csv(csv_tag).await;
    assert_eq!((fresh.status, fresh.header("vary")), (304, Some("accept")));
    assert!(fresh.text.is_empty());
}

// A resource without links has its pages written straight from the database's rows; as
// CSV it is the same records, row for row, as the JSON list: decimals, JSON values,
// booleans, nulls and formula-like text alike.
backends!(books_download_as_csv_row_for_row_as_the_json_list, library::service());
async fn books_download_as_csv_row_for_row_as_the_json_list(s: Server) {
    use base64::Engine;
    let password = "correct horse battery";
    let admin = json!({ "card_number": "00000001", "full_name": "Libby", "password": password }).to_string();
    restgen::auth::bootstrap_admin(&s.store, library::generated::resources::AUTH.as_ref().unwrap(), &admin)
        .await
        .unwrap();
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("00000001:{password}")));
    let post = |path: &'static str, body: Value| {
        let (s, basic) = (&s, basic.clone());
        async move {
            let r = s.send_with("POST", path, Some(body), &[("authorization", &basic)]).await;
            assert_eq!(r.status, 201, "{}", r.text);
            r.body
        }
    };
    let author = post("/authors", json!({ "name": "Ursula" })).await;
    for (title, isbn, price, tags) in [
        ("=HYPERLINK(\"x\")", "9780060512750", "12.50", json!(["sf", "a, \"b\""])),
        ("Plain, \"quoted\"\r\nlines", "9780441478125", "0.00", json!([])),
        ("-1+2", "9780553283686", "3.10", json!({ "shelf": 4 })),
    ] {
        let book = json!({ "title": title, "isbn": isbn, "author_id": author["id"], "price": price, "tags": tags });
        post("/books", book).await;
    }
    let listed = s.get("/books?sort=title_asc").await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    let records = listed.body["data"].as_array().expect("the page's records");
    assert_eq!(records.len(), 3);
    let csv = s.send_with("GET", "/books?sort=title_asc", None, &[("accept", "text/csv")]).await;
    let (header, rows) = table(&csv);
    assert_eq!(rows.len(), records.len());
    for (row, record) in rows.iter().zip(records) {
        assert_eq!(row, &row_of(&header, record));
    }
    assert!(rows.iter().any(|r| r.iter().any(|c| c.starts_with("'=HYPERLINK"))), "{rows:?}");
}

backends!(accept_weighs_the_offers_and_errors_stay_problems, shop::service());
async fn accept_weighs_the_offers_and_errors_stay_problems(s: Server) {
    let ann = register(&s, "ann").await;
    let auth = ann.bearer();
    call(&s, &ann, "POST", "/api/orders", Some(json!({ "total_cents": 5 }))).await;
    let with = |accept: &'static str| {
        let auth = auth.clone();
        let s = &s;
        async move { s.send_with("GET", "/api/orders", None, &[("authorization", &auth), ("accept", accept)]).await }
    };
    for (accept, want) in [
        ("*/*", "application/json"),
        ("application/json;q=0.5, text/csv", CSV),
        ("text/csv;q=0.5, application/json", "application/json"),
        ("text/*, application/json;q=0.1", CSV),
        ("text/html, */*;q=0.1", "application/json"),
        ("TEXT/CSV; Charset=\"UTF-8\"", CSV),
        ("application/json; charset=utf-8", "application/json"),
    ] {
        let r = with(accept).await;
        assert_eq!((r.status, r.header("content-type")), (200, Some(want)), "Accept: {accept}");
    }
    for accept in ["application/xml", "text/csv;q=0, application/json;q=0", "text/csv; charset=latin1", "nonsense"] {
        let r = with(accept).await;
        r.assert_problem(406);
        assert!(r.body["detail"].as_str().unwrap().contains("application/json, text/csv"), "{}", r.text);
        assert_eq!(r.header("vary"), Some("accept"));
    }
    // An error is problem+json whatever `Accept` asks for.
    let missing = s
        .send_with(
            "GET",
            "/api/orders/00000000-0000-7000-8000-000000000000",
            None,
            &[("authorization", &auth), ("accept", "text/csv")],
        )
        .await;
    missing.assert_problem(404);
    let anonymous = s.send_with("GET", "/api/orders", None, &[("accept", "text/csv")]).await;
    anonymous.assert_problem(401);
    // Writes answer JSON: `Accept` chooses among the representations of reads.
    let created = s
        .send_with(
            "POST",
            "/api/orders",
            Some(json!({ "total_cents": 1 })),
            &[("authorization", &auth), ("accept", "text/csv")],
        )
        .await;
    assert_eq!((created.status, created.header("content-type")), (201, Some("application/json")));
}

/// Every readable path of every resource of `service`, with what it offers: an
/// unacceptable `Accept` is a 406 naming exactly the resource's formats, before anything
/// else is looked at; CSV is answered exactly where the resource offers it.
async fn every_read_negotiates(s: &Server, service: Service) {
    use restgen::spec::{Format, Operation};
    for spec in service.resources {
        let offered: Vec<&str> = spec
            .formats
            .iter()
            .map(|f| if *f == Format::Csv { "text/csv; charset=utf-8; header=present" } else { "application/json" })
            .collect();
        let mut paths = Vec::new();
        if spec.has(Operation::List) {
            paths.push(format!("{}{}", service.base_path, spec.path));
        }
        if spec.has(Operation::Get) {
            let id =
                if spec.id == restgen::spec::IdKind::Integer { "1" } else { "00000000-0000-7000-8000-000000000000" };
            paths.push(format!("{}{}/{id}", service.base_path, spec.path));
        }
        for path in paths {
            let refused = s.send_with("GET", &path, None, &[("accept", "image/png")]).await;
            refused.assert_problem(406);
            assert!(
                refused.body["detail"].as_str().unwrap().ends_with(&offered.join(", ")),
                "{path}: {}",
                refused.text
            );
            let csv = s.send_with("GET", &path, None, &[("accept", "text/csv")]).await;
            if spec.formats.contains(&Format::Csv) {
                assert_ne!(csv.status, 406, "{path} offers CSV");
                if csv.status == 200 {
                    assert_eq!(csv.header("content-type"), Some(CSV));
                }
            } else {
                csv.assert_problem(406);
            }
        }
    }
}

backends!(every_read_of_the_shop_negotiates, shop::service());
async fn every_read_of_the_shop_negotiates(s: Server) {
    every_read_negotiates(&s, shop::service()).await;
}

backends!(every_read_of_the_fleet_negotiates, fleet::service());
async fn every_read_of_the_fleet_negotiates(s: Server) {
    every_read_negotiates(&s, fleet::service()).await;
}

backends!(every_read_of_the_library_negotiates, library::service());
async fn every_read_of_the_library_negotiates(s: Server) {
    every_read_negotiates(&s, library::service()).await;
}

backends!(every_read_of_a_derived_service_negotiates, crate::services::derived::service());
async fn every_read_of_a_derived_service_negotiates(s: Server) {
    every_read_negotiates(&s, crate::services::derived::service()).await;
}
