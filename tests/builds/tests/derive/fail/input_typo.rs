// A body type takes `#[field]` attributes like a resource's fields, checked alike.
#[derive(restgen::Input)]
pub struct SignUp {
    #[field(settable, emial)]
    pub email: String,
    #[field(settable, password, min_length = 8, max_length = 4)]
    pub password: String,
}

fn main() {}
