use restgen::__private::uuid::Uuid;

#[derive(restgen::Enum, Clone, Copy, Debug, PartialEq)]
pub enum Fulfilment {
    Pickup,
    Delivery,
}

#[derive(restgen::Resource)]
#[resource(path = "/parcels", access(all = [anyone]))]
pub struct Parcel {
    pub id: Uuid,
    #[field(values(pickup, courier), settable)]
    pub fulfilment: Fulfilment,
}

fn main() {}
