//! End-to-end: the generated services over real HTTP on an ephemeral loopback port, each
//! test with a database of its own (a SQLite file; a PostgreSQL schema when
//! `RESTGEN_TEST_DATABASE_URL` is set).

mod accounts;
mod auth;
mod client;
mod conditional;
mod cors;
mod derive_service;
mod derived;
mod derived_shop;
mod derived_time;
mod fleet;
mod harness;
mod idempotency;
mod keys;
mod library;
mod nested;
mod openapi;
mod rate;
mod retries;
mod security;
mod shop;
