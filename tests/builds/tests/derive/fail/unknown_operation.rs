use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes", operations(craete, get))]
pub struct Note {
    pub id: Uuid,
}

fn main() {}
