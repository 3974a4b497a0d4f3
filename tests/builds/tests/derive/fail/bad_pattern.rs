use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    #[field(settable, pattern = "[a-z")]
    pub code: String,
}

fn main() {}
