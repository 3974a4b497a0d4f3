// The shop of `examples/shop/shop.yaml`, written with the derive macros instead. The
// end-to-end suite serves it (`e2e/services/derived_shop.rs`), and `tests/equivalence.rs` holds its
// model to the one the YAML front-end builds from the schema, resource for resource.

use restgen::__private::chrono::{DateTime, Utc};
use restgen::__private::uuid::Uuid;

/// An account. Anyone may register; is_admin and roles are never taken from the body.
#[derive(restgen::Resource, serde::Deserialize)]
#[resource(
    path = "/users",
    principal(identifier = email),
    access(create = [anyone], read = [owner, admin], write = [owner, admin], delete = [admin]),
    not_owned = not_found
)]
pub struct User {
    pub id: Uuid,
    #[field(settable, max_length = 100)]
    pub name: String,
    #[field(email, unique, settable(create))]
    pub email: String,
    // Never in an answer: empty when a record is read.
    #[field(password, min_length = 8, settable(create))]
    #[serde(default)]
    pub password: String,
    #[field(default = false)]
    pub is_admin: bool,
    #[field(roles)]
    pub roles: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(restgen::Resource, serde::Deserialize)]
#[resource(
    path = "/customers",
    renamed_from = "client",
    owner = User,
    pagination(style = page, default_size = 20, max_size = 100),
    envelope = bare,
    formats(json, csv),
    access(read = [owner, staff], write = [owner, staff]),
    nested_under(User),
    events(created, updated, deleted),
    feed
)]
pub struct Customer {
    pub id: Uuid,
    pub owner_id: Uuid,
    #[field(min_length = 1, max_length = 200, settable, sort)]
    pub name: String,
    #[field(email, unique, settable, filter, nullable = false)]
    pub email: Option<String>,
    #[field(settable, filter, sort, renamed_from = "town")]
    pub city: Option<String>,
    #[field(max_length = 30, settable, filter, sort, read(owner), write(owner))]
    #[serde(default)]
    pub phone: Option<String>,
    #[field(text, max_length = 2000, settable(replace, patch), read(staff), write(staff))]
    #[serde(default)]
    pub staff_note: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(restgen::Resource, serde::Deserialize)]
#[resource(
    path = "/orders",
    former_paths("/purchases"),
    owner = User,
    nested_under(User),
    pagination(style = cursor, default_size = 20, max_size = 100),
    envelope = "data",
    formats(json, csv),
    cache(max_age = "30", visibility = private),
    unknown_fields = reject,
    links,
    rate_limit(algorithm = sliding_window, limit = 30, window = "1m", key = principal),
    states(
        field = status,
        initial = pending,
        transitions(
            pay(from(pending), to = paid),
            ship(from(paid), to = shipped, roles(admin)),
            cancel(from(pending, paid), to = cancelled),
        ),
    ),
    status_endpoint,
    events(created, updated, deleted, pay, ship, cancel),
    feed
)]
pub struct Order {
    pub id: Uuid,
    pub owner_id: Uuid,
    #[field(values(pending, paid, shipped, cancelled), filter)]
    pub status: OrderStatus,
    #[field(min = 0, settable(create))]
    pub total_cents: i64,
    #[field(default = now, sort)]
    pub date: DateTime<Utc>,
    #[field(ref = Customer, settable(create), filter)]
    pub customer_id: Option<Uuid>,
    #[field(text, settable, max_length = 2000, since = 2)]
    pub note: Option<String>,
    #[field(settable, filter, default = false, until = 2)]
    pub gift_wrap: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(restgen::Resource, serde::Deserialize)]
#[resource(path = "/invoices", owner = User, operations(get, list))]
pub struct Invoice {
    pub id: Uuid,
    pub owner_id: Uuid,
    #[field(min = 0, nullable = false)]
    pub amount_cents: Option<i64>,
    #[field(ref = Order, nullable = false)]
    pub order_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
