use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
pub struct Note {
    pub id: Uuid,
}

fn main() {}
