use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes", access(all = [anyone]), cache(max_age = "soon"))]
pub struct Note {
    pub id: Uuid,
}

fn main() {}
