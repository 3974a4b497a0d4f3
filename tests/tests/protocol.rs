//! The protocol's facts are named once, in restgen-wire, and the prose a user reads says
//! what the code does: each check here reads a doc and holds it to the constant.

use std::path::Path;

fn doc(name: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs").join(name)).unwrap();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// docs/webhooks.md lists every delay of the retry schedule the runtime waits.
#[test]
fn the_webhook_docs_list_the_retry_schedule_the_runtime_follows() {
    let all = restgen_wire::retries::RETRY_SCHEDULE.len();
    let (most, last) = (restgen_wire::retries::described(all - 1), restgen_wire::retries::described(all));
    let last = last.rsplit(", ").next().unwrap();
    let sentence = format!("at once, then after {most} and {last}");
    assert!(doc("webhooks.md").contains(&sentence), "docs/webhooks.md should say: {sentence}");
}
