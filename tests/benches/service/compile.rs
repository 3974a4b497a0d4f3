//! What the generated crate costs to compile, as a user meets it: the shop generated into
//! a directory of its own and built there with a target directory of its own (every
//! dependency compiled, as on a first checkout), in debug and in release; then one field
//! added to the schema, the crate generated again and built again in debug (the edit,
//! generate, build loop); and the generated lines per resource.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The field added for the incremental build: a customer's phone number.
const ADDED: &str = "      phone: { type: string, nullable: true, settable: true, max_length: 40 }\n";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn run(command: &mut Command) -> Duration {
    let start = Instant::now();
    let out = command.output().expect("the command runs");
    let took = start.elapsed();
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
    took
}

fn lines_under(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            if path.is_dir() {
                lines_under(&path)
            } else if path.extension().is_some_and(|x| x == "rs") {
                std::fs::read_to_string(&path).unwrap().lines().count()
            } else {
                0
            }
        })
        .sum()
}

/// The measurements as a Markdown section.
pub fn measure() -> String {
    let root = root();
    run(cargo().args(["build", "--release", "-q", "-p", "restgen-cli"]).current_dir(&root));
    let restgen = root.join("target/release/restgen");
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("shop.yaml");
    let text = std::fs::read_to_string(root.join("examples/shop/shop.yaml")).unwrap();
    std::fs::write(&schema, &text).unwrap();
    let crate_dir = dir.path().join("shop");
    let generate = || run(Command::new(&restgen).arg("generate").arg(&schema).arg("--out").arg(&crate_dir));
    generate();
    // The workspace's lock: the same dependency versions as the rest of this run.
    std::fs::copy(root.join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();
    let target = dir.path().join("target");
    let build = |release: bool| {
        let mut c = cargo();
        c.arg("build").arg("-q").arg("--offline").arg("--manifest-path").arg(crate_dir.join("Cargo.toml"));
        c.arg("--target-dir").arg(&target);
        if release {
            c.arg("--release");
        }
        run(&mut c)
    };
    let generated = lines_under(&crate_dir.join("src/generated"));
    let (shop, _) = restgen_schema::load("shop.yaml", &text).expect("the shop's schema is valid");
    let resources = shop.resources.len();
    println!("compile cost: cold debug build of the generated shop ...");
    let debug = build(false);
    println!("compile cost: cold release build ...");
    let release = build(true);
    // One field more: regenerate and build again, as a user does after an edit.
    let at = text.find("      city:").expect("the shop's customers have a city");
    let edited = format!("{}{ADDED}{}", &text[..at], &text[at..]);
    std::fs::write(&schema, edited).unwrap();
    let regenerate = generate();
    let incremental = build(false);
    format!(
        "The generated shop ({resources} resources, {generated} generated lines: {} per resource), built in a \
         directory of its own with its own target directory:\n\n\
         | build | time |\n|---|---:|\n\
         | cold, debug (every dependency) | {:.1} s |\n\
         | cold, release (every dependency) | {:.1} s |\n\
         | one field added: `restgen generate`, then debug build | {:.2} s + {:.1} s |\n",
        generated / resources.max(1),
        debug.as_secs_f64(),
        release.as_secs_f64(),
        regenerate.as_secs_f64(),
        incremental.as_secs_f64(),
    )
}
