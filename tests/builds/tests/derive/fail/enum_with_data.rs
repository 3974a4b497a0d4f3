#[derive(restgen::Enum)]
pub enum Size {
    Small,
    Custom(u32),
    Named { label: String },
}

fn main() {}
