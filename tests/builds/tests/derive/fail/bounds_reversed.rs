use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    #[field(settable, min = 10, max = 1)]
    pub stars: i64,
}

fn main() {}
