use restgen::__private::uuid::Uuid;

// Three mistakes: each is reported, in one build, at its own attribute.
#[derive(restgen::Resource)]
#[resource(path = "/notes", pagination(style = curser))]
pub struct Note {
    pub id: Uuid,
    #[field(settable, max_lenght = 10)]
    pub title: String,
    #[field(settable, email, min = 1)]
    pub contact: String,
}

fn main() {}
