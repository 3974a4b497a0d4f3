//! `cargo run -p derive-service`: the bakery on a local SQLite file (`DATABASE_URL` for
//! another), at `BIND` (default `127.0.0.1:8080`).

fn main() -> std::process::ExitCode {
    derive_service::app().main()
}
