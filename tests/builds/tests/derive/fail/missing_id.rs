#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    #[field(settable)]
    pub title: String,
}

fn main() {}
