use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/folders")]
pub struct Folder {
    pub id: Uuid,
}

// Folders are named by UUIDs; this field holds an integer.
#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    #[field(settable, ref = Folder)]
    pub folder_id: Option<i64>,
}

fn main() {}
