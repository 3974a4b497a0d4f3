#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: String,
}

fn main() {}
