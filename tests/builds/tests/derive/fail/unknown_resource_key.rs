use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(pth = "/notes")]
pub struct Note {
    pub id: Uuid,
}

fn main() {}
