use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes", pagination(default_size = 50, max_size = 10))]
pub struct Note {
    pub id: Uuid,
}

fn main() {}
