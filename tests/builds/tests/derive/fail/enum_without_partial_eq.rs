#[derive(restgen::Enum, Clone, Debug)]
pub enum Fulfilment {
    Pickup,
    Delivery,
}

fn main() {}
