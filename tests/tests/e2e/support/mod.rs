//! What the suites share: starting a service on a fresh database (`harness`), signing
//! in as somebody (`accounts`), and the shop in a process of its own (`child`).

pub mod accounts;
pub mod child;
pub mod harness;
pub mod receiver;
