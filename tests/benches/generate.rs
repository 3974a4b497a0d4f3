//! Parse, check and generate synthetic schemas of 10, 100 and 1,000 resources and print
//! the time per resource at each size: it should stay flat as the schema grows.
//!
//! Run: `cargo bench -p restgen-tests --bench generate`

use restgen_core::emit::{Options, RuntimeDep};
use std::fmt::Write;
use std::time::{Duration, Instant};

/// A schema of `n` resources in the shape of the shop's: owned, with refs to the previous
/// resource, enums with a lifecycle, filters, sorts, and every input kind.
fn synthetic(n: usize) -> String {
    let mut s = String::from(
        "service: synthetic\nauth:\n  principal: account\n  login: { identifier: email }\n  roles: [admin, member]\n  admin_roles: [admin]\nresources:\n  account:\n    path: /accounts\n    access: { create: [anyone] }\n    fields:\n      email: { type: email, required: true, unique: true, settable: [create] }\n      password: { type: password, required: true, settable: [create] }\n",
    );
    for i in 0..n.saturating_sub(1) {
        let prev = if i == 0 { "account".to_owned() } else { format!("thing{}", i - 1) };
        writeln!(
            s,
            "  thing{i}:\n    path: /things{i}\n    owner: account\n    fields:\n      name: {{ type: string, required: true, max_length: 100, settable: true, sort: true }}\n      status: {{ type: enum, values: [open, done, gone], filter: true }}\n      amount: {{ type: integer, min: 0, default: 0, settable: [create] }}\n      note: {{ type: text, nullable: true, settable: true }}\n      parent_id: {{ type: ref, to: {prev}, nullable: true, settable: true, filter: true }}\n    states:\n      field: status\n      initial: open\n      transitions:\n        finish: {{ from: [open], to: done }}\n        drop: {{ from: [open, done], to: gone }}\n    events: [created, finish]"
        )
        .unwrap();
    }
    s
}

/// One parse + check + generate; returns the time of the first two and of the last.
fn run(text: &str) -> (Duration, Duration) {
    let start = Instant::now();
    let (service, _) = restgen_schema::load("synthetic.yaml", text).expect("synthetic schema is valid");
    let loaded = start.elapsed();
    let options = Options {
        source_name: "synthetic.yaml".into(),
        runtime: RuntimeDep::Version("0.1".into()),
        client_runtime: RuntimeDep::Version("0.1".into()),
    };
    let out = restgen_core::emit::generate(&service, &options).expect("generates");
    assert!(out.files.len() >= 5);
    (loaded, start.elapsed() - loaded)
}

fn main() {
    println!(
        "{:>10} {:>12} {:>14} {:>14} {:>16} {:>6}",
        "resources", "total", "parse+check", "generate", "per resource", "runs"
    );
    let mut first_per: Option<Duration> = None;
    for n in [10, 100, 1000] {
        let text = synthetic(n);
        run(&text); // warm up
        let runs = (2000 / n).max(3);
        let (mut load, mut emit) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..runs {
            let (l, e) = run(&text);
            load += l;
            emit += e;
        }
        let (load, emit) = (load / runs as u32, emit / runs as u32);
        let total = load + emit;
        let per = total / n as u32;
        let ratio = first_per.map_or(1.0, |f| per.as_secs_f64() / f.as_secs_f64());
        first_per.get_or_insert(per);
        println!(
            "{n:>10} {total:>12.2?} {load:>14.2?} {emit:>14.2?} {per:>16.2?} {runs:>6}   per resource vs 10 resources: {ratio:.2}x"
        );
    }
}
