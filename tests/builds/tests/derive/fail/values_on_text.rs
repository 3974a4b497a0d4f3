use restgen::__private::uuid::Uuid;

#[derive(restgen::Resource)]
#[resource(path = "/parcels", access(all = [anyone]))]
pub struct Parcel {
    pub id: Uuid,
    #[field(values(small, large), settable)]
    pub size: String,
}

fn main() {}
