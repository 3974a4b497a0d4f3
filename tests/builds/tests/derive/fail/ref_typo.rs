use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/folders")]
pub struct Folder {
    pub id: Uuid,
}

#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    #[field(settable, ref = Foldr)]
    pub folder_id: Option<Uuid>,
}

fn main() {}
