//! A round trip through the progenitor client of the running shop, as a Rust user of
//! progenitor would write it: register, log in, create, read with and without a current
//! `ETag`, list with filters, sorts and both of the shop's paging styles (cursor and page),
//! PATCH, PUT, DELETE, and the fields of problem bodies.
//!
//!     shop-progenitor http://127.0.0.1:8080
//!
//! Exits non-zero, saying what differed, on the first surprise.

include!(concat!(env!("OUT_DIR"), "/shop.rs"));

use futures::TryStreamExt;

/// The problem body of an error answer, read into the document's `Problem` type: problem
/// bodies are `application/problem+json`, which progenitor hands over as bytes.
async fn problem(error: Error<ByteStream>) -> (u16, types::Problem) {
    let Error::ErrorResponse(answer) = error else { panic!("expected a documented error answer, got {error:?}") };
    let status = answer.status().as_u16();
    let bytes: Vec<u8> = answer.into_inner().into_inner().map_ok(|b| b.to_vec()).try_concat().await.expect("the body");
    let problem: types::Problem = serde_json::from_slice(&bytes).expect("a problem body of the documented shape");
    assert_eq!(i64::from(problem.status), i64::from(status), "the problem's status is the answer's");
    (status, problem)
}

/// A client sending `token` on every request.
fn signed_in(base: &str, token: &str) -> Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
    Client::new_with_client(base, reqwest::Client::builder().default_headers(headers).build().unwrap())
}

/// A new account, signed in.
async fn account(base: &str, name: &str) -> Client {
    let anonymous = Client::new(base);
    let email = format!("{name}-{}@example.com", uuid::Uuid::new_v4().simple());
    let password = "correct horse battery staple";
    let user = anonymous
        .create_user()
        .body_map(|b| b.name(name).email(email.as_str()).password(password))
        .send()
        .await
        .expect("registering")
        .into_inner();
    assert_eq!(user.email.as_str(), email, "the new account reads back");
    let token = anonymous.login().body_map(|b| b.email(email.as_str()).password(password)).send().await.expect("login");
    signed_in(base, token.into_inner().access_token.as_str())
}

#[tokio::main]
async fn main() {
    let base = std::env::args().nth(1).expect("usage: shop-progenitor BASE_URL");
    let ann = account(&base, "ann").await;
    let bob = account(&base, "bob").await;

    // Customers page by number: three, two to a page.
    for (name, city) in [("Ada", "Paris"), ("Ben", "Oslo"), ("Cy", "Paris")] {
        ann.create_customer()
            .body_map(|b| b.name(name).city(Some(city.parse().unwrap())))
            .send()
            .await
            .expect("a customer");
    }
    let first = ann.list_customer().per_page(std::num::NonZeroU64::new(2).unwrap()).send().await.expect("page 1");
    let second = ann
        .list_customer()
        .per_page(std::num::NonZeroU64::new(2).unwrap())
        .page(std::num::NonZeroU64::new(2).unwrap())
        .send()
        .await
        .expect("page 2")
        .into_inner();
    let first = first.into_inner();
    // The customers' envelope is `bare`: a page is the array itself.
    assert_eq!((first.len(), second.len()), (2, 1), "three customers on two pages");
    let paris = ann.list_customer().city("Paris").send().await.expect("a filter").into_inner();
    assert_eq!(paris.len(), 2, "two customers in Paris");
    let customer = &paris[0];

    // Orders page by cursor: three, sorted by newest first, two to a page.
    let mut created = Vec::new();
    for cents in [100, 200, 300] {
        let order = ann
            .create_order()
            .body_map(|b| b.total_cents(cents).customer_id(Some(customer.id)))
            .send()
            .await
            .expect("an order");
        assert_eq!(order.status().as_u16(), 201);
        created.push(order.into_inner());
    }
    let sort = vec![types::ListOrderSortItem::CreatedAtDesc];
    let page = ann.list_order().limit(2).sort(sort.clone()).send().await.expect("a page").into_inner();
    assert!(page.has_more, "more after two of three");
    let cursor = page.next_cursor.clone().expect("a cursor while more follow");
    let rest = ann.list_order().limit(2).sort(sort).cursor(cursor.to_string()).send().await.expect("the next page");
    let seen: Vec<uuid::Uuid> = page.data.iter().chain(&rest.into_inner().data).map(|o| o.id).collect();
    let newest_first: Vec<uuid::Uuid> = created.iter().rev().map(|o| o.id).collect();
    assert_eq!(seen, newest_first, "every order once, newest first");
    let of_customer = ann.list_order().customer_id(customer.id).status("pending").send().await.expect("filters");
    assert_eq!(of_customer.into_inner().data.len(), 3, "the customer's pending orders");

    // A read, and the same read with its ETag: 304, which progenitor leaves to the caller
    // (it types 2xx and the documented errors only).
    let order = &created[0];
    let read = ann.get_order().order_id(order.id).send().await.expect("a read");
    let tag = read.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(read.into_inner().total_cents, 100);
    match ann.get_order().order_id(order.id).if_none_match(tag.as_str()).send().await {
        Err(Error::UnexpectedResponse(answer)) => assert_eq!(answer.status().as_u16(), 304),
        other => panic!("expected 304 for a current ETag, got {other:?}"),
    }

    // PATCH merges, PUT replaces.
    let patched = ann
        .update_order()
        .order_id(order.id)
        .body_map(|b| b.note(Some("gift".parse().unwrap())))
        .send()
        .await
        .expect("a patch")
        .into_inner();
    assert_eq!((patched.note.as_deref().map(String::as_str), patched.total_cents), (Some("gift"), 100));
    let replaced = ann.replace_order().order_id(order.id).body_map(|b| b.note(None)).send().await.expect("a replace");
    assert_eq!(replaced.into_inner().note, None, "a replace without the note clears it");

    // Problems, read as the documented type.
    let (status, p) = problem(ann.create_order().body_map(|b| b.total_cents(-1)).send().await.unwrap_err()).await;
    assert_eq!(status, 400);
    assert_eq!(p.errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(), ["total_cents"], "{p:?}");
    let (status, p) = problem(bob.get_order().order_id(order.id).send().await.unwrap_err()).await;
    assert_eq!(status, 403, "somebody else's order: {p:?}");
    let anonymous = Client::new(&base);
    let (status, _) = problem(anonymous.list_order().send().await.unwrap_err()).await;
    assert_eq!(status, 401);

    // DELETE, then the order is gone.
    let deleted = ann.delete_order().order_id(order.id).send().await.expect("a delete");
    assert_eq!(deleted.status().as_u16(), 204);
    let (status, p) = problem(ann.get_order().order_id(order.id).send().await.unwrap_err()).await;
    assert_eq!(status, 404, "{p:?}");
    println!(
        "progenitor client of the shop's 3.0 document: register, login, create, get, 304, filters, sorts, \
         cursor and page paging, PATCH, PUT, DELETE and problem bodies as documented"
    );
}
