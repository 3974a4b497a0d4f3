//! Business rules of Fleet API. Written once by `restgen generate` and never
//! overwritten: regenerating keeps every edit you make here.
//!
//! `Rules` implements `crate::generated::hooks::Hooks`, whose methods run before each
//! write, after the input passed the schema's checks. Implement the ones you need; a
//! method may change the input, or refuse the write with a problem, e.g.
//! `restgen::Problem::unprocessable("...")` (422).

use crate::generated::hooks::Hooks;
use crate::models::{CreateVehicle, PatchVehicle, Trip, VehicleKind};
use restgen::Problem;

/// This service's rules.
pub struct Rules;

/// What a bike can carry, in kilograms.
const BIKE_LIMIT_KG: i64 = 50;

impl Hooks for Rules {
    /// Plates are stored in capitals, and a bike cannot be given a truck's capacity.
    fn before_create_vehicle(&self, input: &mut CreateVehicle) -> Result<(), Problem> {
        input.plate = input.plate.trim().to_uppercase();
        bike_capacity(Some(input.kind), input.capacity)
    }

    fn before_patch_vehicle(&self, _id: &str, input: &mut PatchVehicle) -> Result<(), Problem> {
        bike_capacity(input.kind, input.capacity)
    }

    /// A trip arrives only once its distance is recorded.
    fn before_transition_trip(&self, _id: &str, transition: &str, trip: &Trip) -> Result<(), Problem> {
        if transition == "arrive" && trip.distance_km.is_zero() {
            return Err(Problem::unprocessable("record the trip's `distance_km` before it arrives"));
        }
        Ok(())
    }
}

fn bike_capacity(kind: Option<VehicleKind>, capacity: Option<i64>) -> Result<(), Problem> {
    match (kind, capacity) {
        (Some(VehicleKind::Bike), Some(kg)) if kg > BIKE_LIMIT_KG => {
            Err(Problem::unprocessable(format!("a bike carries at most {BIKE_LIMIT_KG} kg, not {kg}")))
        }
        _ => Ok(()),
    }
}
