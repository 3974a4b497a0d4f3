use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/users", principal(identifier = email))]
pub struct User {
    pub id: Uuid,
    #[field(email, settable)]
    pub email: String,
}

fn main() {}
