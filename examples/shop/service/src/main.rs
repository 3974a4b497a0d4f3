//! Shop API. Written once by `restgen generate`; yours to edit from now on.

fn main() {
    println!("shop: 4 resource(s) generated from shop.yaml");
    println!("  user at /api/users");
    println!("  customer at /api/customers");
    println!("  order at /api/orders");
    println!("  invoice at /api/invoices");
}
