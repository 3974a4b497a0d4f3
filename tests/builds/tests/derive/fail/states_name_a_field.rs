use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(
    path = "/notes",
    states(field = stage, initial = draft, transitions(publish(from(draft), to = done)))
)]
pub struct Note {
    pub id: Uuid,
    #[field(values(draft, done))]
    pub state: NoteState,
}

fn main() {}
