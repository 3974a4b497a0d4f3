use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes", owner = User)]
pub struct Note {
    pub id: Uuid,
}

fn main() {}
