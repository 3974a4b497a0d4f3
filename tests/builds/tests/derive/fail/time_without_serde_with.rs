use restgen::__private::time::{Date, OffsetDateTime};
use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/bookings", access(all = [anyone]))]
pub struct Booking {
    pub id: Uuid,
    #[field(settable)]
    pub starts_at: OffsetDateTime,
    #[field(settable)]
    pub day: Option<Date>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

fn main() {}
