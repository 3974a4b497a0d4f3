//! End-to-end: the generated services over real HTTP on an ephemeral loopback port, each
//! test with a database of its own (a SQLite file; a PostgreSQL schema when
//! `RESTGEN_TEST_DATABASE_URL` is set). `services` drives each service, `features` one
//! behaviour across services, `support` starts them and signs in.

mod features;
mod services;
mod support;
