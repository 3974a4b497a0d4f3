use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    #[field(setable)]
    pub title: String,
}

fn main() {}
