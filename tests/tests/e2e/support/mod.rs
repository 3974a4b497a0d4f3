//! What the suites share: starting a service on a fresh database (`harness`) and signing
//! in as somebody (`accounts`).

pub mod accounts;
pub mod harness;
pub mod receiver;
