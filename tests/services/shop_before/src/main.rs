//! Shop API. Written once by `restgen generate`; yours to edit from now on.
//!
//! Configuration comes from the environment: `DATABASE_URL` (default: the SQLite file
//! `shop_before.db` here), `BIND` (default `127.0.0.1:8080`), `RUST_LOG`.

fn main() -> std::process::ExitCode {
    restgen::serve::main(shop_before::service())
}
