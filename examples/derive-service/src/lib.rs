//! A bakery's orders, written by hand with restgen's derive macros. The structs are the
//! records clients see; `#[resource]` and `#[field]` say what a schema's resource would;
//! the one rule the schema format cannot say — an order's total is the sum of its line
//! items and its fulfilment's fee — is plain Rust beside them, in [`total`], and the
//! fulfilment is the bakery's own enum, which knows its fee.

use restgen::__private::chrono::{DateTime, Utc};
use restgen::__private::uuid::Uuid;
use restgen::routes::Hooks;
use restgen::{App, Problem, Resource};
use serde::{Deserialize, Serialize};

/// An order of baked goods. Its total is the service's to compute, never a client's.
#[derive(Resource, Serialize, Deserialize, Clone, Debug)]
#[resource(
    path = "/orders",
    access(all = [anyone]),
    pagination(style = cursor, default_size = 20, max_size = 100)
)]
pub struct Order {
    pub id: Uuid,
    /// Who the order is for.
    #[field(settable, min_length = 1, max_length = 100, sort)]
    pub customer: String,
    /// What was ordered.
    #[field(settable(create, replace), json)]
    pub items: Vec<LineItem>,
    /// The sum of the items' prices, in cents.
    #[field(default = 0, min = 0, sort)]
    pub total_cents: i64,
    /// How the order reaches the customer: the bakery's own type.
    #[field(values(pickup, delivery), default = "pickup", settable(create, replace), filter)]
    pub fulfilment: Fulfilment,
    /// Paid orders keep their items.
    #[field(values(open, paid, cancelled), default = "open", settable(patch), filter)]
    pub status: OrderStatus,
    #[field(settable, text, max_length = 500)]
    pub note: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// How an order reaches its customer. Written by hand: `#[derive(restgen::Enum)]` makes
/// its variants the values of `Order::fulfilment` (`pickup`, `delivery`), and the fee is
/// the bakery's business, beside it.
#[derive(restgen::Enum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fulfilment {
    /// Collected at the counter.
    Pickup,
    /// Brought to the door.
    Delivery,
}

/// What a delivery costs, in cents.
pub const DELIVERY_FEE_CENTS: i64 = 350;

impl Fulfilment {
    /// What fulfilling an order this way adds to its total, in cents.
    pub fn fee_cents(self) -> i64 {
        match self {
            Fulfilment::Pickup => 0,
            Fulfilment::Delivery => DELIVERY_FEE_CENTS,
        }
    }
}

/// One line of an order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LineItem {
    pub sku: String,
    pub quantity: i64,
    pub unit_cents: i64,
}

/// The most line items one order holds.
pub const MAX_ITEMS: usize = 50;

/// The business rule: an order holds 1 to 50 line items, each of a positive quantity and a
/// price of no less than zero, and its total is their sum plus its fulfilment's fee. Runs
/// on the record about to be stored, at create and at every change, so the total can
/// never disagree with the items.
pub fn total(order: &mut Order) -> Result<(), Problem> {
    if order.items.is_empty() || order.items.len() > MAX_ITEMS {
        return Err(Problem::unprocessable(format!("an order holds 1 to {MAX_ITEMS} line items")));
    }
    let mut total: i64 = order.fulfilment.fee_cents();
    for (i, item) in order.items.iter().enumerate() {
        if item.sku.is_empty() || item.quantity < 1 || item.unit_cents < 0 {
            return Err(Problem::unprocessable(format!(
                "line item {i} needs a sku, a quantity of at least 1 and a price of at least 0"
            )));
        }
        total = item
            .quantity
            .checked_mul(item.unit_cents)
            .and_then(|line| total.checked_add(line))
            .ok_or_else(|| Problem::unprocessable("the order's total is too large"))?;
    }
    order.total_cents = total;
    Ok(())
}

/// The service: orders under `/api`, with the business rule.
pub fn app() -> App {
    App::new("bakery").base_path("/api").resource_with::<Order>(Hooks::default().compute(total))
}
