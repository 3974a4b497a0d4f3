use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    /// Nobody sets it and it has no default.
    pub views: i64,
}

fn main() {}
