use restgen::__private::uuid::Uuid;

// Cursor paging reads `cursor` as where a page starts: a filter of that name would never
// be read as one.
#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    #[field(settable, filter)]
    pub cursor: String,
}

fn main() {}
