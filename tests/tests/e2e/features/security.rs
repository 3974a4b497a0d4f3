//! The security suite, driven by the shop's own model (`RESOURCES`, `AUTH`) so that it
//! grows with the schema:
//! - BOLA: for every owned resource (and the principal) and every operation it has,
//!   a second user's attempt on the first user's record is refused and changes nothing;
//! - mass assignment: for every field not settable in a write operation, and every
//!   server-set field, sending it is refused and nothing is applied;
//! - refs across owners: for every ref a write may set to a resource a plain account may
//!   read only its own records of, naming another account's record is refused as naming
//!   nothing, and nothing is written;
//! - forged credentials: every token forgery of the identity issue gives 401;
//! - duplicate keys: every field settable in a write, named twice in one body, is
//!   refused naming it, and nothing is written;
//! - unique values per owner: every unique field of an owned resource takes a value
//!   another account's record holds (nothing disclosed), and refuses the owner's second.

use crate::backends;
use crate::support::accounts::{self, Account, call, register};
use crate::support::harness::{Reply, Server};
use crate::support::settable;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use restgen::spec::{FieldKind, FieldSpec, IdKind, Operation, ResourceSpec, Rule};
use restgen::store::SqlValue;
use serde_json::{Map, Value, json};
use shop::generated::resources::RESOURCES;
use std::sync::atomic::{AtomicUsize, Ordering};

const BASE: &str = "/api";
const MIN_CASES: usize = 60;

backends!(security_suite_bola_mass_assignment_and_forged_tokens, shop::service());
async fn security_suite_bola_mass_assignment_and_forged_tokens(s: Server) {
    let (ann, bob) = (register(&s, "ann").await, register(&s, "bob").await);
    let root = accounts::admin(&s, "root").await;
    let bola = bola(&s, &ann, &bob).await;
    let mass = mass_assignment(&s, &ann, &bob, &root).await;
    let refs = foreign_refs(&s, &ann, &bob).await;
    let forged = forged_tokens(&s, &ann).await;
    let duplicates = duplicate_keys(&s, &ann, &bob).await;
    let unique = unique_values_per_owner(&s, &ann, &bob).await;
    let total = bola + mass + refs + forged + duplicates + unique;
    eprintln!(
        "security suite: {bola} BOLA, {mass} mass-assignment, {refs} foreign-ref, {forged} forged-credential, \
         {duplicates} duplicate-key and {unique} unique-per-owner cases"
    );
    assert!(duplicates > 0, "every write names some field: none was tried twice");
    assert!(unique > 0, "the shop has a unique field on an owned resource: none was tried");
    assert!(refs > 0, "the shop has refs to owned records: none was tried");
    assert!(total >= MIN_CASES, "only {total} cases: the suite no longer covers the model");
}

fn resource(name: &str) -> &'static ResourceSpec {
    RESOURCES.iter().find(|r| r.name == name).expect("a resource of the model")
}

/// The whole collection in one page (the suite stays under every `max_size`).
fn everything(spec: &ResourceSpec) -> String {
    let size = if spec.pagination.style == restgen::spec::PageStyle::Page { "per_page" } else { "limit" };
    format!("{BASE}{}?{size}={}", spec.path, spec.pagination.max_size)
}

fn item_path(spec: &ResourceSpec, id: &str) -> String {
    format!("{BASE}{}/{id}", spec.path)
}

fn id_of(record: &Value) -> String {
    match &record["id"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Records are owned through `owner_id`, or are the caller's own account.
fn is_owned(spec: &ResourceSpec) -> bool {
    spec.owner.is_some() || spec.principal
}

/// What a caller who is not the owner must get: the resource's `not_owned` answer where
/// ownership could admit them, 403 where no rule could.
fn assert_refused(spec: &ResourceSpec, rules: &[Rule], r: &Reply, what: &str) {
    let expected = if rules.contains(&Rule::Owner) && spec.hide_not_owned { 404 } else { 403 };
    assert_eq!(r.status, expected, "{what}: {}", r.text);
    r.assert_problem(expected);
}

/// A valid value for `f`, unique where it must be; refs get a record of `owner`'s.
async fn sample(s: &Server, owner: &Account, f: &FieldSpec) -> Value {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    match f.kind {
        FieldKind::String | FieldKind::Text => json!(format!("sample {n}")),
        FieldKind::Integer => json!(f.min.map_or(1, |m| m as i64 + 1)),
        FieldKind::Number => json!(f.min.map_or(1.5, |m| m + 1.5)),
        FieldKind::Decimal => json!("1.50"),
        FieldKind::Boolean => json!(true),
        FieldKind::Uuid => json!("0190b6a4-0000-7000-8000-0000000000aa"),
        FieldKind::Email => json!(format!("sample{n}@example.com")),
        FieldKind::Url => json!("https://example.com/sample"),
        FieldKind::Date => json!("2026-01-02"),
        FieldKind::DateTime => json!("2026-01-02T03:04:05Z"),
        FieldKind::Enum => json!(f.values[0]),
        FieldKind::Json => json!({ "sample": n }),
        FieldKind::Password => json!("a long sample password"),
        FieldKind::Roles => json!([]),
        FieldKind::Ref => {
            let target = resource(f.to.expect("refs name their target").0);
            Box::pin(record_of(s, owner, target)).await["id"].clone()
        }
    }
}

/// A body with a valid value for every field settable in `op`.
async fn body_for(s: &Server, owner: &Account, spec: &ResourceSpec, op: Operation) -> Map<String, Value> {
    let mut body = Map::new();
    for f in spec.fields {
        let may_set = settable(f, op);
        // Requests go to the unprefixed paths, which serve the newest version.
        let newest = shop::generated::resources::VERSIONING.and_then(|v| v.newest()).map(|v| v.number);
        if may_set && f.kind != FieldKind::Roles && f.gate.includes(newest) {
            body.insert(f.name.into(), sample(s, owner, f).await);
        }
    }
    body
}

/// A record of `spec` belonging to `owner`: their own account, created through the API,
/// or, for a resource clients cannot create (`invoice`), stored directly.
async fn record_of(s: &Server, owner: &Account, spec: &'static ResourceSpec) -> Value {
    if spec.principal {
        return call(s, owner, "GET", &item_path(spec, &owner.id), None).await.body;
    }
    if spec.has(Operation::Create) {
        let body = body_for(s, owner, spec, Operation::Create).await;
        let r = call(s, owner, "POST", &format!("{BASE}{}", spec.path), Some(Value::Object(body))).await;
        assert_eq!(r.status, 201, "creating a {}: {}", spec.name, r.text);
        return r.body;
    }
    let mut values: Vec<(&str, SqlValue)> = Vec::new();
    if spec.id == IdKind::Uuid {
        values.push(("id", SqlValue::Text(Some(uuid_v7()))));
    }
    if let Some((_, kind)) = spec.owner {
        values.push(("owner_id", SqlValue::id(kind, &owner.id).unwrap()));
    }
    for f in spec.fields {
        values.push((f.name, SqlValue::from_json(f, &sample(s, owner, f).await)));
    }
    if spec.timestamps {
        values.push(("created_at", SqlValue::Text(Some("2026-01-01T00:00:00.000000Z".into()))));
        values.push(("updated_at", SqlValue::Text(Some("2026-01-01T00:00:00.000000Z".into()))));
    }
    Value::from(s.store.insert(spec, values, None).await.unwrap())
}

fn uuid_v7() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("0190b6a4-0000-7000-8000-{:012x}", N.fetch_add(1, Ordering::Relaxed) + 1)
}

/// Bob against Ann's records, every owned resource and operation.
async fn bola(s: &Server, ann: &Account, bob: &Account) -> usize {
    let mut cases = 0;
    for &spec in RESOURCES.iter().filter(|r| is_owned(r)) {
        let record = record_of(s, ann, spec).await;
        let id = id_of(&record);
        let item = item_path(spec, &id);
        let unchanged = |what: String| {
            let item = item.clone();
            let record = record.clone();
            async move {
                // Read back as its owner, who may always read it.
                let now = call(s, ann, "GET", &item, None).await;
                assert_eq!(now.status, 200, "{what}: the owner cannot read the record back");
                assert_eq!(now.body, record, "{what} changed the record");
            }
        };
        for op in spec.operations {
            let what = format!("Bob's {op:?} on Ann's {}", spec.name);
            match op {
                Operation::Create => continue, // ownership at create: the caller, tested in auth.rs
                Operation::Get => {
                    let r = call(s, bob, "GET", &item, None).await;
                    assert_refused(spec, spec.access.read, &r, &what);
                    let head = s.send_with("HEAD", &item, None, &[("authorization", &bob.bearer())]).await;
                    assert_eq!(head.status, r.status, "{what}: HEAD answers as GET does");
                }
                Operation::List => {
                    let r = call(s, bob, "GET", &everything(spec), None).await;
                    assert_eq!(r.status, 200, "{what}: {}", r.text);
                    assert!(!r.text.contains(&id), "{what}: Ann's record is listed to Bob");
                    for parent in spec.parents.iter().filter(|p| is_owned(p.spec)) {
                        let parent_id =
                            if parent.spec.principal { ann.id.clone() } else { id_of(&record[parent.column]) };
                        let path = format!("{BASE}{}/{parent_id}{}", parent.path, spec.path);
                        let r = call(s, bob, "GET", &path, None).await;
                        assert_refused(parent.spec, parent.spec.access.read, &r, &format!("Bob listing {path}"));
                        cases += 1;
                    }
                }
                Operation::Replace => {
                    let body = body_for(s, bob, spec, Operation::Replace).await;
                    let r = call(s, bob, "PUT", &item, Some(Value::Object(body))).await;
                    assert_refused(spec, spec.access.write, &r, &what);
                    unchanged(what).await;
                }
                Operation::Patch => {
                    let body = body_for(s, bob, spec, Operation::Patch).await;
                    let r = call(s, bob, "PATCH", &item, Some(Value::Object(body))).await;
                    assert_refused(spec, spec.access.write, &r, &what);
                    // A body its owner would be refused for tells Bob nothing either: he
                    // learns he may not write before anything about what he sent; and a
                    // record that does not exist is missing whatever the body.
                    if let Some(f) = spec.fields.iter().find(|f| f.patch && f.kind == FieldKind::String) {
                        let bad = json!({ f.name: 42 });
                        let r = call(s, bob, "PATCH", &item, Some(bad.clone())).await;
                        assert_refused(spec, spec.access.write, &r, &format!("{what}, with a bad body"));
                        let own = call(s, ann, "PATCH", &item, Some(bad.clone())).await;
                        assert!(matches!(own.status, 400 | 422), "Ann's bad patch: {}", own.text);
                        let missing = match spec.id {
                            IdKind::Integer => "999999999".to_owned(),
                            IdKind::Uuid => "0190b6a4-0000-7000-8000-0000000000dd".to_owned(),
                        };
                        let r = call(s, ann, "PATCH", &item_path(spec, &missing), Some(bad)).await;
                        r.assert_problem(404);
                        cases += 1;
                    }
                    unchanged(what).await;
                }
                Operation::Delete => {
                    let r = call(s, bob, "DELETE", &item, None).await;
                    assert_refused(spec, spec.access.delete, &r, &what);
                    let still = s.store.get(spec, &SqlValue::id(spec.id, &id).unwrap()).await;
                    assert!(still.is_ok(), "{what}: the record is gone");
                }
            }
            cases += 1;
        }
    }
    cases
}

/// The value a client could try to sneak in for `name`, different from `current`.
fn tampered(spec: &ResourceSpec, name: &str, current: &Value, bob: &Account) -> Value {
    match name {
        "id" => json!("0190b6a4-0000-7000-8000-0000000000ff"),
        "owner_id" => json!(bob.id),
        "created_at" | "updated_at" => json!("2000-01-01T00:00:00Z"),
        _ => match spec.field(name).map(|f| f.kind) {
            Some(FieldKind::Boolean) => json!(!current.as_bool().unwrap_or(false)),
            Some(FieldKind::Integer) => json!(current.as_i64().unwrap_or(0) + 1000),
            Some(FieldKind::Enum) => {
                let f = spec.field(name).unwrap();
                json!(f.values.iter().find(|v| current != *v).unwrap_or(&f.values[0]))
            }
            Some(FieldKind::Roles) => json!(["admin"]),
            Some(FieldKind::Email) => json!("tampered@example.com"),
            Some(FieldKind::DateTime) => json!("2000-01-01T00:00:00Z"),
            Some(FieldKind::Ref) => json!("0190b6a4-0000-7000-8000-0000000000ee"),
            _ => json!("tampered value"),
        },
    }
}

/// Whether a plain signed-in account may read only its own records of `spec` (or none).
fn read_in_part(spec: &ResourceSpec) -> bool {
    !spec.access.read.iter().any(|r| matches!(r, Rule::Anyone | Rule::Authenticated))
}

/// Bob's writes naming Ann's records: every ref settable in a write whose target Bob may
/// read only in part, set to Ann's record of it, is refused as naming nothing (400 naming
/// the field, the same answer as for an id nobody has), and nothing is written.
async fn foreign_refs(s: &Server, ann: &Account, bob: &Account) -> usize {
    let mut cases = 0;
    for &spec in RESOURCES {
        for f in spec.fields.iter().filter(|f| f.kind == FieldKind::Ref) {
            let Some(restgen::spec::Target(target)) = f.target else { continue };
            if !read_in_part(target) {
                continue;
            }
            let anns = id_of(&record_of(s, ann, target).await);
            for op in [Operation::Create, Operation::Replace, Operation::Patch] {
                if !spec.has(op) || !settable(f, op) {
                    continue;
                }
                let what = format!("Bob's {op:?} of a {} naming Ann's {} in `{}`", spec.name, target.name, f.name);
                let (method, path, watched) = match op {
                    Operation::Create => ("POST", format!("{BASE}{}", spec.path), everything(spec)),
                    _ => {
                        let item = item_path(spec, &id_of(&record_of(s, bob, spec).await));
                        let method = if op == Operation::Replace { "PUT" } else { "PATCH" };
                        (method, item.clone(), item)
                    }
                };
                let mut body = match op {
                    Operation::Patch => Map::new(),
                    _ => body_for(s, bob, spec, op).await,
                };
                body.insert(f.name.into(), json!(anns));
                let before = call(s, bob, "GET", &watched, None).await;
                let r = call(s, bob, method, &path, Some(Value::Object(body))).await;
                r.assert_problem(400);
                assert_eq!(r.error_fields(), [f.name], "{what}: {}", r.text);
                assert_eq!(
                    call(s, bob, "GET", &watched, None).await.body,
                    before.body,
                    "{what}: something was written"
                );
                cases += 1;
            }
        }
    }
    cases
}

/// Server-set fields and fields not settable in `op`: what a write must never apply.
fn not_settable(spec: &ResourceSpec, op: Operation) -> Vec<&'static str> {
    let mut names = vec!["id"];
    if spec.owner.is_some() {
        names.push("owner_id");
    }
    if spec.timestamps {
        names.extend(["created_at", "updated_at"]);
    }
    for f in spec.fields {
        let may_set = settable(f, op);
        if !may_set {
            names.push(f.name);
        }
    }
    names
}

/// Every non-settable field in every write operation, as the record's owner.
async fn mass_assignment(s: &Server, ann: &Account, bob: &Account, root: &Account) -> usize {
    let mut cases = 0;
    for &spec in RESOURCES {
        let collection = format!("{BASE}{}", spec.path);
        // The admin sees every record: the count proves a refused create stored nothing.
        let count = || async {
            let r = call(s, root, "GET", &everything(spec), None).await;
            r.body.as_array().or_else(|| r.body["data"].as_array()).map_or(0, Vec::len)
        };
        for op in [Operation::Create, Operation::Replace, Operation::Patch] {
            if !spec.has(op) {
                continue;
            }
            for name in not_settable(spec, op) {
                let what = format!("{op:?} of a {} with `{name}`", spec.name);
                match op {
                    Operation::Create => {
                        let mut body = body_for(s, ann, spec, op).await;
                        body.insert(name.into(), tampered(spec, name, &Value::Null, bob));
                        let before = count().await;
                        let r = if spec.access.create.contains(&Rule::Anyone) {
                            s.post(&collection, Value::Object(body)).await
                        } else {
                            call(s, ann, "POST", &collection, Some(Value::Object(body))).await
                        };
                        r.assert_problem(400);
                        assert_eq!(r.error_fields(), [name], "{what}");
                        assert_eq!(count().await, before, "{what}: a record was stored");
                    }
                    _ => {
                        let record = record_of(s, ann, spec).await;
                        let item = item_path(spec, &id_of(&record));
                        let mut body =
                            if op == Operation::Replace { body_for(s, ann, spec, op).await } else { Map::new() };
                        let current = call(s, ann, "GET", &item, None).await.body;
                        body.insert(name.into(), tampered(spec, name, &current[name], bob));
                        let method = if op == Operation::Replace { "PUT" } else { "PATCH" };
                        let r = call(s, ann, method, &item, Some(Value::Object(body))).await;
                        r.assert_problem(400);
                        assert_eq!(r.error_fields(), [name], "{what}");
                        let after = call(s, ann, "GET", &item, None).await;
                        assert_eq!(after.body, current, "{what}: the record changed");
                    }
                }
                cases += 1;
            }
        }
    }
    cases
}

/// Every field settable in every write, named twice in one body: the first value a
/// tampered one, the last the valid one a check that reads the last would pass. Refused
/// as 400 naming the field, and nothing is written (two parsers never see two requests).
async fn duplicate_keys(s: &Server, ann: &Account, bob: &Account) -> usize {
    let mut cases = 0;
    for &spec in RESOURCES {
        for op in [Operation::Create, Operation::Replace, Operation::Patch] {
            if !spec.has(op) {
                continue;
            }
            let body = body_for(s, ann, spec, op).await;
            for (name, valid) in &body {
                let what = format!("{op:?} of a {} naming `{name}` twice", spec.name);
                let (method, path, watched) = match op {
                    Operation::Create => ("POST", format!("{BASE}{}", spec.path), everything(spec)),
                    _ => {
                        let item = item_path(spec, &id_of(&record_of(s, ann, spec).await));
                        (if op == Operation::Replace { "PUT" } else { "PATCH" }, item.clone(), item)
                    }
                };
                let before = call(s, ann, "GET", &watched, None).await;
                let first = tampered(spec, name, valid, bob);
                let rest = Value::Object(body.clone()).to_string();
                let text = format!("{{{}:{first},{}", Value::from(name.as_str()), &rest[1..]);
                let r = crate::support::harness::request_raw(s, method, &path, &ann.bearer(), text).await;
                r.assert_problem(400);
                assert_eq!(r.error_fields(), [name.as_str()], "{what}: {}", r.text);
                let after = call(s, ann, "GET", &watched, None).await;
                assert_eq!(after.body, before.body, "{what}: something was written");
                cases += 1;
            }
        }
    }
    cases
}

/// Every unique field of an owned resource (not `unique: global`) that a create sets:
/// a value Ann's record holds is Bob's to use too (201: nothing about Ann's records is
/// disclosed to him, and he cannot claim her values first), and his own second record with
/// it is the 409 naming the field.
async fn unique_values_per_owner(s: &Server, ann: &Account, bob: &Account) -> usize {
    let mut cases = 0;
    for &spec in RESOURCES.iter().filter(|r| r.owner.is_some() && r.has(Operation::Create)) {
        for f in spec.fields.iter().filter(|f| f.unique && !f.unique_global && f.create) {
            let what = format!("`{}.{}`", spec.name, f.name);
            let collection = format!("{BASE}{}", spec.path);
            let anns = body_for(s, ann, spec, Operation::Create).await;
            let value = anns[f.name].clone();
            let r = call(s, ann, "POST", &collection, Some(Value::Object(anns.clone()))).await;
            assert_eq!(r.status, 201, "{what}: {}", r.text);
            let mut bobs = body_for(s, bob, spec, Operation::Create).await;
            bobs.insert(f.name.into(), value.clone());
            let r = call(s, bob, "POST", &collection, Some(Value::Object(bobs.clone()))).await;
            assert_eq!(r.status, 201, "{what}: Bob is refused a value only Ann's record holds: {}", r.text);
            let mut again = body_for(s, bob, spec, Operation::Create).await;
            again.insert(f.name.into(), value);
            let r = call(s, bob, "POST", &collection, Some(Value::Object(again))).await;
            r.assert_problem(409);
            assert_eq!(r.error_fields(), [f.name], "{what}: {}", r.text);
            cases += 1;
        }
    }
    cases
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

/// Claims like the shop's own, changed by `edit`.
fn claims(ann: &Account, edit: impl FnOnce(&mut Value)) -> Value {
    let mut c = json!({
        "sub": ann.id, "roles": ["admin"], "iat": now(), "exp": now() + 600,
        "iss": "shop", "aud": "shop-clients",
    });
    edit(&mut c);
    c
}

/// A token as a forger makes it: signed by jsonwebtoken's RustCrypto provider called
/// directly, whichever provider this process's services installed (theirs signs only the
/// schema's algorithms, as it should).
fn sign(alg: Algorithm, key: &EncodingKey, claims: &Value) -> String {
    use jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER;
    let header = b64(&serde_json::to_vec(&Header::new(alg)).unwrap());
    let message = format!("{header}.{}", b64(&serde_json::to_vec(claims).unwrap()));
    let signature = (DEFAULT_PROVIDER.signer_factory)(&alg, key).unwrap().try_sign(message.as_bytes()).unwrap();
    format!("{message}.{}", b64(&signature))
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Every forgery is refused with 401 and a challenge; the genuine token is not.
async fn forged_tokens(s: &Server, ann: &Account) -> usize {
    let secret = EncodingKey::from_secret(crate::support::harness::JWT_SECRET);
    let other = EncodingKey::from_secret(b"somebody else's secret, 32 bytes or more");
    let rsa = EncodingKey::from_rsa_pem(include_bytes!("../../../fixtures/keys/rsa-private.pem")).unwrap();
    let genuine = sign(Algorithm::HS256, &secret, &claims(ann, |_| {}));
    let me = item_path(resource("user"), &ann.id);
    let ok = s.send_with("GET", &me, None, &[("authorization", &format!("Bearer {genuine}"))]).await;
    assert_eq!(ok.status, 200, "a well-signed token opens the account: {}", ok.text);

    let payload = b64(claims(ann, |_| {}).to_string().as_bytes());
    let mut tampered = genuine.split('.').map(str::to_owned).collect::<Vec<_>>();
    tampered[1] = b64(claims(ann, |c| c["sub"] = json!("0190b6a4-0000-7000-8000-000000000001")).to_string().as_bytes());
    let forgeries: Vec<(&str, String)> = vec![
        ("alg none", format!("{}.{payload}.", b64(br#"{"alg":"none","typ":"JWT"}"#))),
        ("alg none, upper case", format!("{}.{payload}.", b64(br#"{"alg":"NONE","typ":"JWT"}"#))),
        ("signed with another secret", sign(Algorithm::HS256, &other, &claims(ann, |_| {}))),
        ("payload changed after signing", tampered.join(".")),
        ("signature stripped", format!("{}.{}.", tampered[0], payload)),
        ("expired", sign(Algorithm::HS256, &secret, &claims(ann, |c| c["exp"] = json!(now() - 3600)))),
        ("not valid yet", sign(Algorithm::HS256, &secret, &claims(ann, |c| c["nbf"] = json!(now() + 3600)))),
        ("wrong issuer", sign(Algorithm::HS256, &secret, &claims(ann, |c| c["iss"] = json!("evil")))),
        ("wrong audience", sign(Algorithm::HS256, &secret, &claims(ann, |c| c["aud"] = json!("evil")))),
        ("no exp", sign(Algorithm::HS256, &secret, &claims(ann, |c| drop(c.as_object_mut().unwrap().remove("exp"))))),
        ("another algorithm (HS512)", sign(Algorithm::HS512, &secret, &claims(ann, |_| {}))),
        ("RS256 for an HS256 service", sign(Algorithm::RS256, &rsa, &claims(ann, |_| {}))),
        ("not a token", "not.a.token".into()),
        ("empty", String::new()),
    ];
    // A claim the schema names must be present, not only right when present.
    let mut forgeries = forgeries;
    let jwt = &shop::generated::resources::AUTH.expect("the shop has auth").jwt;
    for (claim, declared) in [("iss", jwt.issuer.is_some()), ("aud", jwt.audience.is_some())] {
        if declared {
            let token =
                sign(Algorithm::HS256, &secret, &claims(ann, |c| drop(c.as_object_mut().unwrap().remove(claim))));
            forgeries.push((if claim == "iss" { "no issuer" } else { "no audience" }, token));
        }
    }
    let mut cases = 0;
    for (what, token) in &forgeries {
        let r = s.send_with("GET", &me, None, &[("authorization", &format!("Bearer {token}"))]).await;
        r.assert_problem(401);
        let challenge = r.header("www-authenticate").unwrap_or_default();
        assert!(challenge.starts_with("Bearer realm=\"shop\""), "{what}: {challenge}");
        cases += 1;
    }
    cases
}
