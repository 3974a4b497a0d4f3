//! The shop as its binary runs, in a process of its own: this test binary started again
//! to run [`child_shop`], configured from the environment as a deployment configures it,
//! until a signal stops it. For what only a process shows: crashes, signals, its output.

/// The variable that makes [`child_shop`] serve: the database URL.
const CHILD_DB: &str = "RESTGEN_E2E_CHILD_DB";

/// Not a test of its own: the process [`shop_command`] starts (this test binary again,
/// with [`CHILD_DB`] set).
#[test]
#[ignore = "the child process of the tests that need the shop in a process of its own"]
fn child_shop() {
    if std::env::var(CHILD_DB).is_ok() {
        // The library instead, where a test asks for it (it takes API keys in the query).
        let service = match std::env::var(CHILD_SERVICE).as_deref() {
            Ok("library") => library::service(),
            _ => shop::service(),
        };
        std::process::exit(if restgen::serve::main(service) == std::process::ExitCode::SUCCESS { 0 } else { 1 });
    }
}

/// Which service [`child_shop`] runs: the shop unless it says `library`.
const CHILD_SERVICE: &str = "RESTGEN_E2E_CHILD_SERVICE";

/// [`shop_command`] for the library service.
pub fn library_command(url: &str) -> std::process::Command {
    let mut command = shop_command(url);
    command.env(CHILD_SERVICE, "library");
    command
}

/// The command that starts the shop on the database at `url`, listening on a free
/// loopback port, with the suite's JWT secret; add what the test needs, then spawn it.
pub fn shop_command(url: &str) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["support::child::child_shop", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB, url)
        .env("DATABASE_URL", url)
        .env("BIND", "127.0.0.1:0")
        .env("SHOP_JWT_SECRET", std::str::from_utf8(crate::support::harness::JWT_SECRET).unwrap());
    command
}

/// A child process, killed (SIGKILL) when dropped, so a failing test leaves none behind.
pub struct Process(pub std::process::Child);

impl Process {
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// SIGTERM, as an orchestrator stops an instance.
    pub fn terminate(&self) {
        let status = std::process::Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status().unwrap();
        assert!(status.success());
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}
