//! README command 1 as a new user meets it, against the same command at an earlier commit,
//! in one run: each commit cloned fresh with an empty target directory, the command its
//! README gives run as written, and timed until the service prints the address it listens
//! on. The commits take turns, each first in every other round, so that a machine which
//! slows or speeds up during the run moves both alike: between hours this machine's
//! figures move by a tenth, so only a ratio taken within one run means anything.

use crate::turns::{Turns, median};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the service prints once it listens (`restgen::serve`).
const LISTENING: &str = " listening on http://";

/// The longest a command may take before the run gives up on it.
const LIMIT: Duration = Duration::from_secs(30 * 60);

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("git prints UTF-8").trim().to_owned()
}

/// The README's first command: the line after `# 1.` in its first `sh` block.
fn command_one(readme: &str) -> Option<String> {
    let block = readme.split_once("```sh\n")?.1.split_once("```")?.0;
    let mut lines = block.lines().skip_while(|l| !l.starts_with("# 1."));
    lines.next()?;
    lines.next().map(str::to_owned)
}

/// One commit's README command 1, from a fresh clone with an empty target directory: the
/// time until the service printed its address.
fn time_at(commit: &str, scratch: &Path) -> Duration {
    let dir = scratch.join(commit);
    let _ = std::fs::remove_dir_all(&dir);
    git(&crate::workspace(), &["clone", "-q", "--no-checkout", ".", dir.to_str().expect("a UTF-8 path")]);
    git(&dir, &["checkout", "-q", commit]);
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("a README");
    let command = command_one(&readme).unwrap_or_else(|| panic!("{commit}'s README has no command 1"));
    println!("first run: {commit}: {command}");

    let start = Instant::now();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1; {command}"))
        .current_dir(&dir)
        // As on a fresh machine: the clone's own target directory, cargo's own defaults.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("CARGO_INCREMENTAL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // Its own process group: the service runs under `cargo run`, and both are stopped.
        .process_group(0)
        .spawn()
        .expect("bash runs");
    let group = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut tail = Vec::new();
        // Read to the end whatever the bytes, so that the command never blocks on a full pipe.
        for line in BufReader::new(stdout).split(b'\n').map_while(Result::ok) {
            let line = String::from_utf8_lossy(&line).into_owned();
            if line.contains(LISTENING) {
                let _ = tx.send(Instant::now());
            }
            tail.push(line);
            if tail.len() > 20 {
                tail.remove(0);
            }
        }
        tail
    });
    let listening = rx.recv_timeout(LIMIT);
    let _ = Command::new("kill").args(["-TERM", "--", &format!("-{group}")]).status();
    let _ = child.wait();
    let tail = reader.join().expect("the reader ends with the command");
    let at = listening.unwrap_or_else(|_| {
        panic!("{commit}: README command 1 ended or timed out before the service listened:\n{}", tail.join("\n"))
    });
    let took = at - start;
    println!("first run: {commit}: listening after {:.1} s", took.as_secs_f64());
    let _ = std::fs::remove_dir_all(&dir);
    took
}

fn seconds(v: &[Duration]) -> String {
    v.iter().map(|d| format!("{:.1}", d.as_secs_f64())).collect::<Vec<_>>().join(", ")
}

/// README command 1 at this checkout's `HEAD` and at `baseline`, `rounds` times each, as a
/// Markdown section.
pub fn measure(baseline: &str, rounds: usize) -> String {
    let root = crate::workspace();
    let head = git(&root, &["rev-parse", "--short", "HEAD"]);
    // `--verify`: one commit, or an error naming what was given (never an option).
    let baseline = git(&root, &["rev-parse", "--verify", "--short", &format!("{baseline}^{{commit}}")]);
    let scratch = tempfile::tempdir().unwrap();
    let turns = Turns::take(rounds, || time_at(&head, scratch.path()), || time_at(&baseline, scratch.path()));
    let (now, then) = (&turns.a, &turns.b);
    let pairs: Vec<String> = turns.ratios().iter().map(|r| format!("{r:.2}x")).collect();
    let (n, t) = (median(now), median(then));
    format!(
        "README command 1 from a fresh clone with an empty target directory, run as each commit's README \
         gives it, until the service prints its address; the commits in turns, rounds: {}:\n\n\
         | commit | runs | median |\n|---|---|---:|\n\
         | {head} (HEAD) | {} s | {:.1} s |\n| {baseline} | {} s | {:.1} s |\n\n\
         {head} / {baseline}: {:.2}x by medians; round by round {}.\n",
        now.len(),
        seconds(now),
        n.as_secs_f64(),
        seconds(then),
        t.as_secs_f64(),
        n.as_secs_f64() / t.as_secs_f64(),
        pairs.join(", "),
    )
}
