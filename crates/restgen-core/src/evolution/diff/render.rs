//! A report as people and programs read it: text grouped by class, or JSON.

use super::{Change, Class, Report};
use crate::origin::Origin;

/// The report for people: changes grouped by resource, each with where it was and is.
pub fn render(report: &Report, old_name: &str, new_name: &str) -> String {
    let mut out = String::new();
    let served = if report.served.is_empty() {
        "unversioned".to_owned()
    } else {
        report.served.iter().map(|v| format!("v{v}")).collect::<Vec<_>>().join(", ")
    };
    out.push_str(&format!("{old_name} -> {new_name} (served: {served})\n"));
    if report.changes.is_empty() {
        out.push_str("\nno changes to the API\n");
        return out;
    }
    let mut groups: Vec<&str> = Vec::new();
    for c in &report.changes {
        if !groups.contains(&c.resource.as_str()) {
            groups.push(&c.resource);
        }
    }
    for group in groups {
        out.push_str(&format!("\n{}\n", if group.is_empty() { "(the API)" } else { group }));
        let mut changes: Vec<&Change> = report.changes.iter().filter(|c| c.resource == group).collect();
        changes.sort_by_key(|c| c.class);
        for c in changes {
            let versions = if c.versions.is_empty() {
                String::new()
            } else {
                format!(" [{}]", c.versions.iter().map(|v| format!("v{v}")).collect::<Vec<_>>().join(", "))
            };
            out.push_str(&format!("  {:<10}{versions} {} ({})\n", c.class.word(), c.message, c.kind));
            let place = |o: &Origin| o.file_pos().map(|p| format!("{}:{}:{}", p.file, p.line, p.column));
            let places: Vec<String> = [("was", place(&c.before)), ("now", place(&c.after))]
                .into_iter()
                .filter_map(|(w, p)| p.map(|p| format!("{w} {p}")))
                .collect();
            if !places.is_empty() {
                out.push_str(&format!("              {}\n", places.join(", ")));
            }
        }
    }
    let breaking = report.count(Class::Breaking);
    out.push_str(&format!(
        "\n{breaking} breaking, {} security, {} compatible\n",
        report.count(Class::Security),
        report.count(Class::Compatible)
    ));
    if breaking > 0 {
        out.push_str(
            "breaking changes land in versions already served: make them in a new version (declare it, gate fields with `since`/`until`), or keep what clients rely on\n",
        );
    }
    out
}

/// The report as JSON, for tools.
pub fn render_json(report: &Report) -> String {
    let place = |o: &Origin| match o.file_pos() {
        Some(p) => serde_json::json!({ "file": &*p.file, "line": p.line, "column": p.column }),
        None => serde_json::Value::Null,
    };
    let changes: Vec<serde_json::Value> = report
        .changes
        .iter()
        .map(|c| {
            serde_json::json!({
                "class": c.class,
                "kind": c.kind,
                "resource": c.resource,
                "message": c.message,
                "versions": c.versions,
                "before": place(&c.before),
                "after": place(&c.after),
            })
        })
        .collect();
    let value = serde_json::json!({
        "served": report.served,
        "changes": changes,
        "breaking": report.count(Class::Breaking),
        "security": report.count(Class::Security),
        "compatible": report.count(Class::Compatible),
    });
    let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
    text.push('\n');
    text
}
