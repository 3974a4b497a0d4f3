//! Each service driven as its users would: the generated shop, fleet and library, the
//! derived shop and bakery, and derived resources of every kind.

mod derive_service;
pub(crate) mod derived;
mod derived_evolution;
pub(crate) mod derived_shop;
mod derived_time;
mod fleet;
mod library;
mod shop;
