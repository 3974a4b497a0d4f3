#[derive(restgen::Enum)]
pub enum Fulfilment {
    Pickup,
    #[value = "pickup"]
    Collect,
    #[value = ""]
    Nowhere,
}

fn main() {}
