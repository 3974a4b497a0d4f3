use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes", envelope = bare)]
pub struct Note {
    pub id: Uuid,
}

fn main() {}
