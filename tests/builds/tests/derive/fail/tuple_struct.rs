#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note(i64);

fn main() {}
