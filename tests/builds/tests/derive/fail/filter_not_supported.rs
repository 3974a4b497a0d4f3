use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/notes")]
pub struct Note {
    pub id: Uuid,
    #[field(settable, json, filter)]
    pub extra: restgen::__private::serde_json::Value,
}

fn main() {}
