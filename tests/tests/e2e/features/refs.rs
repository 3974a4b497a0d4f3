//! Refs, driven by the fleet's model (integer ids, refs between five resources, one
//! resource patched in one statement and one, with a `json` field, read first):
//! - in every write that may set a ref, a ref naming no record is refused with 400 naming
//!   exactly the fields that name nothing, and nothing is written. The service does not
//!   look refs up before writing (the foreign key refuses), so this is what proves a
//!   refusal still says which field;
//! - a record another refers to by a required ref cannot be deleted (409 naming the ref,
//!   the record kept) until the referrer is gone; by an optional ref, it can, and the ref
//!   is cleared.

use crate::backends;
use crate::support::harness::{Reply, Server};
use crate::support::settable;
use fleet::generated::resources::RESOURCES;
use restgen::spec::{FieldKind, FieldSpec, IdKind, Operation, PageStyle, ResourceSpec};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

const BASE: &str = "/v0";

/// Values for fields a pattern constrains, which a sampler cannot make up.
const PATTERNED: [(&str, &str); 1] = [("licence", "AB123456")];

backends!(every_ref_naming_nothing_is_refused_naming_its_field, fleet::service());
async fn every_ref_naming_nothing_is_refused_naming_its_field(s: Server) {
    let records = one_of_each(&s).await;
    let mut cases = 0;
    for spec in RESOURCES {
        for op in [Operation::Create, Operation::Replace, Operation::Patch].into_iter().filter(|op| spec.has(*op)) {
            let refs: Vec<&FieldSpec> =
                spec.fields.iter().filter(|f| f.kind == FieldKind::Ref && settable(f, op)).collect();
            // Each ref alone, then every one at once: all are named, not the first found.
            let mut choices: Vec<Vec<&FieldSpec>> = refs.iter().map(|f| vec![*f]).collect();
            if refs.len() > 1 {
                choices.push(refs.clone());
            }
            for missing in choices {
                let mut body = match op {
                    Operation::Patch => Map::new(),
                    _ => body_for(spec, op, &records, cases + 1),
                };
                for f in &missing {
                    body.insert(f.name.into(), nothing_of(f));
                }
                let id = &records[spec.name]["id"];
                let (method, path, watched) = match op {
                    Operation::Create => ("POST", collection(spec), everything(spec)),
                    Operation::Replace => ("PUT", item(spec, id), item(spec, id)),
                    _ => ("PATCH", item(spec, id), item(spec, id)),
                };
                let what = format!(
                    "{method} {path} with {:?} naming nothing",
                    missing.iter().map(|f| f.name).collect::<Vec<_>>()
                );
                let before = s.get(&watched).await;
                let r = s.send(method, &path, Some(Value::Object(body))).await;
                r.assert_problem(400);
                let mut named = r.error_fields();
                named.sort();
                let mut expected: Vec<String> = missing.iter().map(|f| f.name.to_owned()).collect();
                expected.sort();
                assert_eq!(named, expected, "{what}: {}", r.text);
                assert_eq!(s.get(&watched).await.body, before.body, "{what}: nothing is written");
                cases += 1;
            }
        }
    }
    // driver.depot_id in three writes, vehicle.depot_id in three, trip's two refs alone
    // and together, service_log.vehicle_id: the suite no longer covers the model if fewer.
    assert!(cases >= 10, "only {cases} cases");
}

backends!(a_record_referred_to_goes_only_as_its_refs_allow, fleet::service());
async fn a_record_referred_to_goes_only_as_its_refs_allow(s: Server) {
    let records = one_of_each(&s).await;
    let mut cases = 0;
    for referrer in RESOURCES {
        for f in referrer.fields.iter().filter(|f| f.kind == FieldKind::Ref) {
            let target = resource(f.to.expect("refs name their target").0);
            if !target.has(Operation::Delete) {
                continue;
            }
            // A record of the target of its own, and one of the referrer naming it.
            cases += 1;
            let x = s
                .post(&collection(target), Value::Object(body_for(target, Operation::Create, &records, 1000 + cases)))
                .await;
            assert_eq!(x.status, 201, "{}", x.text);
            let mut naming = records.clone();
            naming.insert(target.name, x.body.clone());
            let by = s
                .post(
                    &collection(referrer),
                    Value::Object(body_for(referrer, Operation::Create, &naming, 1000 + cases)),
                )
                .await;
            assert_eq!(by.status, 201, "{}", by.text);
            let (x_path, by_path) = (item(target, &x.body["id"]), item(referrer, &by.body["id"]));
            let what = format!("deleting the {} that {}.{} names", target.name, referrer.name, f.name);
            let r = s.send("DELETE", &x_path, None).await;
            if f.optional {
                // An optional ref lets go: the referrer stays, naming nothing.
                assert_eq!(r.status, 204, "{what}: {}", r.text);
                assert_eq!(s.get(&by_path).await.body[f.name], Value::Null, "{what}");
                continue;
            }
            // A required ref holds the record: 409 naming the field that holds it.
            r.assert_problem(409);
            let holder = format!("`{}.{}`", referrer.name, f.name);
            assert!(r.body["detail"].as_str().is_some_and(|d| d.contains(&holder)), "{what}: {}", r.text);
            assert_eq!(s.get(&x_path).await.body, x.body, "{what}: still there");
            if referrer.has(Operation::Delete) {
                assert_eq!(s.send("DELETE", &by_path, None).await.status, 204, "{what}");
                assert_eq!(s.send("DELETE", &x_path, None).await.status, 204, "{what}: once nothing refers to it");
            }
        }
    }
    // Every ref of the fleet (driver.depot_id, vehicle.depot_id, trip's two, service_log's).
    assert!(cases >= 5, "only {cases} cases");
}

fn resource(name: &str) -> &'static ResourceSpec {
    RESOURCES.iter().find(|r| r.name == name).expect("a resource of the model")
}

fn collection(spec: &ResourceSpec) -> String {
    format!("{BASE}{}", spec.path)
}

fn item(spec: &ResourceSpec, id: &Value) -> String {
    format!("{BASE}{}/{id}", spec.path)
}

/// The whole collection in one page (the test makes fewer records than any `max_size`).
fn everything(spec: &ResourceSpec) -> String {
    let size = if spec.pagination.style == PageStyle::Page { "per_page" } else { "limit" };
    format!("{}?{size}={}", collection(spec), spec.pagination.max_size)
}

/// An id no record has.
fn nothing_of(f: &FieldSpec) -> Value {
    match f.to.expect("refs name their target").1 {
        IdKind::Integer => json!(987_654_321),
        IdKind::Uuid => json!("0190b6a4-0000-7000-8000-0000000000ee"),
    }
}

/// One record of every resource, each created once the records its refs need exist.
async fn one_of_each(s: &Server) -> HashMap<&'static str, Value> {
    let mut records = HashMap::new();
    while records.len() < RESOURCES.len() {
        let ready = RESOURCES.iter().find(|r| {
            !records.contains_key(r.name)
                && r.fields.iter().filter_map(|f| f.to).all(|(target, _)| records.contains_key(target))
        });
        let spec = ready.expect("refs that can be met in some order");
        let r: Reply = s.post(&collection(spec), Value::Object(body_for(spec, Operation::Create, &records, 0))).await;
        assert_eq!(r.status, 201, "{}: {}", spec.name, r.text);
        records.insert(spec.name, r.body);
    }
    records
}

/// A valid body of every field settable in `op`, unique values made from `n` and the
/// record's own name; refs name the records made first.
fn body_for(spec: &ResourceSpec, op: Operation, records: &HashMap<&str, Value>, n: usize) -> Map<String, Value> {
    let mut body = Map::new();
    for f in spec.fields.iter().filter(|f| settable(f, op)) {
        let unique = format!("{}{}{n}", spec.name, f.name).replace('_', "");
        let value = match f.kind {
            _ if f.pattern.is_some() => {
                let sample = PATTERNED.iter().find(|(name, _)| *name == f.name);
                json!(sample.unwrap_or_else(|| panic!("a sample for the pattern of {}.{}", spec.name, f.name)).1)
            }
            FieldKind::String | FieldKind::Text => json!(unique),
            FieldKind::Email => json!(format!("{unique}@example.com")),
            FieldKind::Integer => json!(f.min.unwrap_or(0.0) as i64),
            FieldKind::Number => json!(f.min.unwrap_or(0.0)),
            FieldKind::Decimal => json!("1.50"),
            FieldKind::Boolean => json!(true),
            FieldKind::Date => json!("2026-01-02"),
            FieldKind::DateTime => json!("2026-01-02T03:04:05Z"),
            FieldKind::Enum => json!(f.values[0]),
            FieldKind::Json => json!({ "n": n }),
            FieldKind::Ref => records[f.to.expect("refs name their target").0]["id"].clone(),
            other => panic!("no sample of a {other:?} field ({}.{})", spec.name, f.name),
        };
        body.insert(f.name.into(), value);
    }
    body
}
