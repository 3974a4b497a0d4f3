use restgen::__private::uuid::Uuid;

// The same ranges as a schema's, from restgen-core's checks: an envelope key with a dash,
// an empty rate budget, an access rule twice, a version 0.
#[derive(restgen::Resource)]
#[resource(
    path = "/notes",
    envelope = "rows-of-notes",
    rate_limit(algorithm = token_bucket, capacity = 0, refill_per_second = 0),
    access(read = [authenticated, authenticated])
)]
pub struct Note {
    pub id: Uuid,
    #[field(settable, until = 0)]
    pub text: String,
}

fn main() {}
