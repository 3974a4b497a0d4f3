use restgen::__private::uuid::Uuid;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Fulfilment {
    Pickup,
    Delivery,
}

#[derive(restgen::Resource)]
#[resource(path = "/parcels", access(all = [anyone]))]
pub struct Parcel {
    pub id: Uuid,
    #[field(values(pickup, delivery), settable)]
    pub fulfilment: Fulfilment,
}

fn main() {}
