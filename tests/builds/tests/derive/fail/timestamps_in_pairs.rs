use restgen::__private::chrono::{DateTime, Utc};
use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
}

fn main() {}
