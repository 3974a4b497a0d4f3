//! The access matrix of nested lists, derived from each service's own model rather than
//! written case by case. For every nested collection (`/{parents}/{parent_id}/{children}`)
//! of every compiled service that has one (the shop, the derived shop, the fleet and the
//! library; the bakery has none), for every kind of caller, and for a parent of the
//! caller's, somebody else's and a missing one, the status and the exact set of records
//! listed follow from the rules docs/auth.md states:
//!
//! 1. the children's `read` must admit the caller to the collection at all (401, 403);
//! 2. the parent is judged as `GET` on it would be: its own `read` (401, 403), its
//!    existence (404), and its owner where only its owner is admitted (403, or with
//!    `not_owned: not_found` the very 404 of a missing parent);
//! 3. what is listed is the parent's children, only the caller's own where the children's
//!    rules admit only owners.
//!
//! HEAD answers as GET does. Where the children page by cursor, `starting_after` naming a
//! child of another parent (or, for a caller who sees only theirs, somebody else's child)
//! and a cursor issued under another parent are refused with a 400 naming the parameter.
//! The expected sets are read from the database, never from the answers under test.

use crate::backends;
use crate::support::harness::{Reply, Server};
use base64::Engine;
use restgen::serve::Service;
use restgen::spec::{
    AuthSpec, Envelope, FieldKind, FieldSpec, IdKind, Operation, PageStyle, ResourceSpec, Rule, Scheme,
};
use restgen::store::{Filter, ListQuery, Page, Record, SortKey, SqlValue};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

const PASSWORD: &str = "correct horse battery";

/// Every kind of parent the access rules know, by the words docs/auth.md uses.
const EVERY_PARENT_KIND: [&str; 6] = [
    "the principal",
    "owned (403)",
    "owned, hidden (404)",
    "readable by anyone",
    "readable by members",
    "readable by a role only",
];

backends!(shop_nested_lists_follow_the_access_matrix, shop::service());
async fn shop_nested_lists_follow_the_access_matrix(s: Server) {
    matrix(&s, &shop::service()).await.report("shop");
}

backends!(derived_shop_nested_lists_follow_the_access_matrix, crate::services::derived_shop::service());
async fn derived_shop_nested_lists_follow_the_access_matrix(s: Server) {
    matrix(&s, &crate::services::derived_shop::service()).await.report("derived shop");
}

backends!(fleet_nested_lists_follow_the_access_matrix, fleet::service());
async fn fleet_nested_lists_follow_the_access_matrix(s: Server) {
    matrix(&s, &fleet::service()).await.report("fleet");
}

backends!(library_nested_lists_follow_the_access_matrix, library::service());
async fn library_nested_lists_follow_the_access_matrix(s: Server) {
    let coverage = matrix(&s, &library::service()).await;
    coverage.report("library");
    let missing: Vec<&str> = EVERY_PARENT_KIND.iter().copied().filter(|k| !coverage.kinds.contains(k)).collect();
    assert!(missing.is_empty(), "the library fixture no longer has parents that are {missing:?}");
    for who in ["anonymous", "the parent's owner", "another member", "an admin", "a role holder", "an API key"] {
        assert!(coverage.callers.contains(who), "no case asked as {who}");
    }
}

/// What a run of the matrix covered.
#[derive(Default)]
struct Coverage {
    cases: usize,
    kinds: BTreeSet<&'static str>,
    callers: BTreeSet<&'static str>,
}

impl Coverage {
    fn report(&self, service: &str) {
        eprintln!("nested-list matrix of the {service}: {} cases, parents {:?}", self.cases, self.kinds);
        assert!(self.cases > 0, "the {service} has no nested list to hold to the matrix");
    }
}

/// A caller, as the oracle sees them and as requests carry them.
struct Who {
    label: &'static str,
    /// The account's id, for a signed-in caller.
    id: Option<String>,
    /// The roles the service gives the account (its default role where it holds none).
    roles: Vec<&'static str>,
    admin: bool,
    headers: Vec<(String, String)>,
}

/// How far a list of rules admits a caller before any record is seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    All,
    Own,
}

impl Who {
    fn reach(&self, rules: &[Rule]) -> Option<Reach> {
        let signed_in = self.id.is_some();
        let all = self.admin
            || rules.iter().any(|r| match r {
                Rule::Anyone => true,
                Rule::Authenticated => signed_in,
                Rule::Role(role) => self.roles.contains(role),
                Rule::Owner => false,
            });
        if all {
            Some(Reach::All)
        } else if signed_in && rules.contains(&Rule::Owner) {
            Some(Reach::Own)
        } else {
            None
        }
    }

    /// 401 without credentials, 403 with.
    fn refused(&self) -> u16 {
        if self.id.is_some() { 403 } else { 401 }
    }

    async fn send(&self, s: &Server, method: &str, path: &str) -> Reply {
        let headers: Vec<(&str, &str)> = self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        s.send_with(method, path, None, &headers).await
    }
}

/// The kind of parent `p` is, in the words of [`EVERY_PARENT_KIND`].
fn parent_kind(p: &ResourceSpec) -> &'static str {
    let read = p.access.read;
    if p.principal {
        "the principal"
    } else if read.contains(&Rule::Anyone) {
        "readable by anyone"
    } else if read.contains(&Rule::Authenticated) {
        "readable by members"
    } else if read.contains(&Rule::Owner) && p.hide_not_owned {
        "owned, hidden (404)"
    } else if read.contains(&Rule::Owner) {
        "owned (403)"
    } else {
        "readable by a role only"
    }
}

/// Who owns `record` of `spec`: the account itself, its `owner_id`, or nobody.
fn owner_of(spec: &ResourceSpec, record: &Value) -> Option<String> {
    if spec.principal {
        Some(id_of(record))
    } else if spec.owner.is_some() {
        Some(id_text(&record["owner_id"]))
    } else {
        None
    }
}

fn id_of(record: &Value) -> String {
    id_text(&record["id"])
}

fn id_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An id no record has.
fn missing_id(kind: IdKind) -> String {
    match kind {
        IdKind::Integer => "987654321".into(),
        IdKind::Uuid => "0190b6a4-ffff-7fff-bfff-ffffffffffff".into(),
    }
}

fn uuid_v7() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("0190b6a5-0000-7000-8000-{:012x}", N.fetch_add(1, Ordering::Relaxed) + 1)
}

fn next() -> usize {
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The service's accounts and every kind of caller.
struct People {
    callers: Vec<Who>,
    /// Owner of the parents called "mine", and of the one created for refs.
    ann: Option<String>,
    bob: Option<String>,
}

impl People {
    async fn seed(s: &Server, service: &Service) -> People {
        let anonymous = Who { label: "anonymous", id: None, roles: Vec::new(), admin: false, headers: Vec::new() };
        let Some(auth) = service.auth.filter(|a| a.principal.is_some()) else {
            return People { callers: vec![anonymous], ann: None, bob: None };
        };
        let default_roles: Vec<&'static str> = auth.default_role.into_iter().collect();
        let mut callers = vec![anonymous];
        let ann = signed_in(s, service, auth, "the parent's owner", &[]).await;
        let bob = signed_in(s, service, auth, "another member", &[]).await;
        let (ann_id, bob_id) = (ann.id.clone(), bob.id.clone());
        if auth.has(Scheme::ApiKey) {
            let path = format!("{}/auth/api-keys", service.base_path);
            let headers: Vec<(&str, &str)> = ann.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let r = s.send_with("POST", &path, Some(json!({ "name": "matrix" })), &headers).await;
            assert_eq!(r.status, 201, "an API key for the parent's owner: {}", r.text);
            let key = r.body["key"].as_str().unwrap().to_owned();
            callers.push(Who {
                label: "an API key",
                id: ann_id.clone(),
                roles: default_roles.clone(),
                admin: false,
                headers: vec![(auth.api_key.header.to_owned(), key)],
            });
        }
        callers.push(ann);
        callers.push(bob);
        if auth.principal.is_some_and(|p| p.roles.is_some()) {
            if let Some(&admin_role) = auth.admin_roles.first() {
                let mut admin = signed_in(s, service, auth, "an admin", &[admin_role]).await;
                admin.admin = true;
                callers.push(admin);
            }
            let others: Vec<&'static str> = auth
                .roles
                .iter()
                .copied()
                .filter(|r| !auth.admin_roles.contains(r) && Some(*r) != auth.default_role)
                .collect();
            if !others.is_empty() {
                callers.push(signed_in(s, service, auth, "a role holder", &others).await);
            }
        }
        People { callers, ann: ann_id, bob: bob_id }
    }
}

/// An account holding `roles` (none: the default role), seeded in the database, and the
/// credentials its requests carry: a bearer token where the service issues them, Basic
/// otherwise.
async fn signed_in(s: &Server, service: &Service, auth: &AuthSpec, label: &'static str, roles: &[&'static str]) -> Who {
    let principal = auth.principal.expect("a principal");
    let spec = principal.resource;
    let identifier = match spec.field(principal.identifier).map(|f| f.kind) {
        Some(FieldKind::Email) => format!("matrix{}@example.com", next()),
        _ => format!("{:08}", 10_000_000 + next()),
    };
    let mut fixed = vec![
        (principal.identifier, json!(identifier)),
        (principal.password, json!(restgen::password::hash(PASSWORD).unwrap())),
    ];
    if let Some(field) = principal.roles {
        fixed.push((field, json!(roles)));
    }
    let record = insert(s, service, spec, None, &fixed, None).await;
    let id = id_of(&record);
    let header = if auth.has(Scheme::Bearer) {
        let body = json!({ principal.identifier: identifier, "password": PASSWORD });
        let r = s.post(principal.login_path, body).await;
        assert_eq!(r.status, 200, "logging in as {label}: {}", r.text);
        format!("Bearer {}", r.body["access_token"].as_str().unwrap())
    } else {
        let pair = format!("{identifier}:{PASSWORD}");
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
    };
    let roles = if roles.is_empty() { auth.default_role.into_iter().collect() } else { roles.to_vec() };
    Who { label, id: Some(id), roles, admin: false, headers: vec![("authorization".into(), header)] }
}

/// A value the database takes for `f`: unique where it must be, a record of the target for
/// a ref.
async fn sample(s: &Server, service: &Service, f: &FieldSpec, owner: Option<&str>) -> Value {
    let n = next();
    match f.kind {
        FieldKind::String | FieldKind::Text | FieldKind::Password => json!(format!("sample {n}")),
        FieldKind::Email => json!(format!("sample{n}@example.com")),
        FieldKind::Url => json!(format!("https://example.com/{n}")),
        FieldKind::Integer => {
            let low = f.min.map_or(1, |m| m as i64);
            let high = f.max.map_or(i64::MAX, |m| m as i64);
            json!(if f.unique { low + n as i64 } else { low.max(1).min(high) })
        }
        FieldKind::Number => json!(f.min.unwrap_or(1.0)),
        FieldKind::Decimal => json!("1.50"),
        FieldKind::Boolean => json!(true),
        FieldKind::Uuid => json!(uuid_v7()),
        FieldKind::Date => json!("2026-01-02"),
        FieldKind::DateTime => json!("2026-01-02T03:04:05.000000Z"),
        FieldKind::Enum => json!(f.values[0]),
        FieldKind::Json => json!({ "sample": n }),
        FieldKind::Roles => json!([]),
        FieldKind::Ref => {
            let (target, _) = f.to.expect("refs name their target");
            let spec = service.resources.iter().find(|r| r.name == target).expect("a resource of the service");
            id_value(&Box::pin(insert(s, service, spec, owner, &[], owner)).await)
        }
    }
}

/// The account `id` of the principal resource `spec`, as far as the matrix reads it.
fn account(spec: &ResourceSpec, id: &str) -> Value {
    json!({ "id": SqlValue::id(spec.id, id).expect("an account id").to_json() })
}

/// A record's id as JSON, the way a ref holds it.
fn id_value(record: &Value) -> Value {
    record["id"].clone()
}

/// Stores a record of `spec` straight in the database (whatever the rules for creating
/// one): owned by `owner` where records are owned, `fixed` fields as given, the rest
/// sampled; refs point at new records owned by `ref_owner`.
async fn insert(
    s: &Server,
    service: &Service,
    spec: &'static ResourceSpec,
    owner: Option<&str>,
    fixed: &[(&str, Value)],
    ref_owner: Option<&str>,
) -> Value {
    if let (true, Some(owner), true) = (spec.principal, owner, fixed.is_empty()) {
        // A ref to an account: the owner's own.
        return account(spec, owner);
    }
    let mut values: Vec<(&str, SqlValue)> = Vec::new();
    if spec.id == IdKind::Uuid {
        values.push(("id", SqlValue::Text(Some(uuid_v7()))));
    }
    if let Some((_, kind)) = spec.owner {
        let owner = match fixed.iter().find(|(k, _)| *k == "owner_id") {
            Some((_, v)) => id_text(v),
            None => owner.expect("an owner for an owned record").to_owned(),
        };
        values.push(("owner_id", SqlValue::id(kind, &owner).unwrap()));
    }
    for f in spec.fields {
        let value = match fixed.iter().find(|(k, _)| *k == f.name) {
            Some((_, v)) => v.clone(),
            None => sample(s, service, f, ref_owner).await,
        };
        values.push((f.name, SqlValue::from_json(f, &value)));
    }
    if spec.timestamps {
        let at = format!("2026-01-01T00:00:{:02}.{:06}Z", next() % 60, next());
        values.push(("created_at", SqlValue::Text(Some(at.clone()))));
        values.push(("updated_at", SqlValue::Text(Some(at))));
    }
    Value::from(s.store.insert(spec, values, None).await.expect("a seeded record is stored"))
}

/// Every record of `spec` whose `column` holds `parent`, from the database.
async fn children_of(s: &Server, spec: &ResourceSpec, column: &'static str, parent: &SqlValue) -> Vec<Record> {
    let query = ListQuery {
        filters: vec![Filter { column, value: parent.clone() }],
        sort: vec![SortKey { column: "id", descending: false, nullable: false, numeric: false }],
        page: Page::Offset(0),
        limit: 10_000,
    };
    s.store.list(spec, &query).await.expect("the children are readable").0
}

/// The records a list answer holds.
fn listed(spec: &ResourceSpec, r: &Reply) -> BTreeSet<String> {
    let items = match spec.envelope {
        Envelope::Bare => &r.body,
        Envelope::Key(key) => &r.body[key],
    };
    items.as_array().unwrap_or_else(|| panic!("a list: {}", r.text)).iter().map(id_of).collect()
}

/// `?limit=...`: the whole list in one page.
fn whole(spec: &ResourceSpec) -> String {
    let size = if spec.pagination.style == PageStyle::Page { "per_page" } else { "limit" };
    format!("{size}={}", spec.pagination.max_size)
}

/// The matrix for every nested list of `service`.
async fn matrix(s: &Server, service: &Service) -> Coverage {
    let people = People::seed(s, service).await;
    let mut coverage = Coverage::default();
    let base = service.base_path;
    for &child in service.resources.iter().filter(|r| r.has(Operation::List)) {
        for link in child.parents {
            let parent = link.spec;
            coverage.kinds.insert(parent_kind(parent));
            // A parent of Ann's and one of Bob's (two for parents nobody owns).
            let mut parents = Vec::new();
            for owner in [people.ann.as_deref(), people.bob.as_deref()] {
                let record = if parent.principal {
                    account(parent, owner.expect("a service with a principal has accounts"))
                } else {
                    insert(s, service, parent, owner, &[], owner).await
                };
                parents.push(record);
            }
            // Two children under each: Ann's and Bob's where children are owned, or the
            // parent's owner's where ownership is the link.
            for p in &parents {
                let parent_owner = owner_of(parent, p);
                for owner in [people.ann.as_deref(), people.bob.as_deref()] {
                    let owner = if link.column == "owner_id" { parent_owner.as_deref() } else { owner };
                    insert(s, service, child, owner, &[(link.column, id_value(p))], owner).await;
                }
            }
            let what = |who: &Who, path: &str| {
                format!("{} listing {path} ({} under a parent {})", who.label, child.name, parent_kind(parent))
            };
            for who in &people.callers {
                coverage.callers.insert(who.label);
                // The answer for a parent that does not exist, which a hidden one must equal.
                let absent = format!("{base}{}/{}{}?{}", link.path, missing_id(parent.id), child.path, whole(child));
                let gone = who.send(s, "GET", &absent).await;
                let expected_gone = match (who.reach(child.access.read), who.reach(parent.access.read)) {
                    (None, _) | (_, None) => who.refused(),
                    _ => 404,
                };
                gone.assert_problem(expected_gone);
                coverage.cases += 1;
                for p in &parents {
                    let parent_id = SqlValue::id(parent.id, &id_of(p)).unwrap();
                    let path = format!("{base}{}/{}{}?{}", link.path, id_of(p), child.path, whole(child));
                    let expected: Result<BTreeSet<String>, u16> =
                        match (who.reach(child.access.read), who.reach(parent.access.read)) {
                            (None, _) | (_, None) => Err(who.refused()),
                            (Some(_), Some(Reach::Own)) if owner_of(parent, p) != who.id => {
                                Err(if parent.hide_not_owned { 404 } else { 403 })
                            }
                            (Some(reach), Some(_)) => Ok(children_of(s, child, link.column, &parent_id)
                                .await
                                .into_iter()
                                .map(Value::from)
                                .filter(|c| reach == Reach::All || owner_of(child, c) == who.id)
                                .map(|c| id_of(&c))
                                .collect()),
                        };
                    let r = who.send(s, "GET", &path).await;
                    match &expected {
                        Ok(ids) => {
                            assert_eq!(r.status, 200, "{}: {}", what(who, &path), r.text);
                            assert_eq!(&listed(child, &r), ids, "{}", what(who, &path));
                        }
                        Err(status) => {
                            r.assert_problem(*status);
                            if *status == 404 {
                                assert_eq!(
                                    r.body,
                                    gone.body,
                                    "{}: a hidden parent answers as a missing one",
                                    what(who, &path)
                                );
                            }
                        }
                    }
                    let head = who.send(s, "HEAD", &path).await;
                    assert_eq!(head.status, r.status, "{}: HEAD answers as GET does", what(who, &path));
                    coverage.cases += 1;
                }
            }
            if child.pagination.style == PageStyle::Cursor {
                coverage.cases += cursors(s, service, &people, child, link, &parents).await;
            }
        }
    }
    coverage
}

/// `starting_after` and `cursor` name positions in one list only: a child of another
/// parent, a record the caller may not see, or a cursor another list issued is a 400.
async fn cursors(
    s: &Server,
    service: &Service,
    people: &People,
    child: &'static ResourceSpec,
    link: &restgen::spec::ParentSpec,
    parents: &[Value],
) -> usize {
    let base = service.base_path;
    let list = |p: &Value, query: &str| format!("{base}{}/{}{}?{query}", link.path, id_of(p), child.path);
    let (mine, theirs) = (&parents[0], &parents[1]);
    // Somebody the rules let see every child of both parents.
    let Some(viewer) = people
        .callers
        .iter()
        .find(|w| w.reach(child.access.read) == Some(Reach::All) && w.reach(link.spec.access.read) == Some(Reach::All))
    else {
        return 0;
    };
    let key = |p: &Value| SqlValue::id(link.spec.id, &id_of(p)).unwrap();
    let their_children = children_of(s, child, link.column, &key(theirs)).await;
    let my_children = children_of(s, child, link.column, &key(mine)).await;
    let their_child = id_of(&Value::from(their_children[0].clone()));
    let my_child = id_of(&Value::from(my_children[0].clone()));
    let mut cases = 0;

    let r = viewer.send(s, "GET", &list(mine, &format!("starting_after={their_child}"))).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["starting_after"], "{}: a child of another parent", viewer.label);
    let r = viewer.send(s, "GET", &list(mine, &format!("starting_after={my_child}"))).await;
    assert_eq!(r.status, 200, "{}: a child of this parent: {}", viewer.label, r.text);
    cases += 2;

    // A cursor issued under Bob's parent works there, and nowhere else.
    let first = viewer.send(s, "GET", &list(theirs, "limit=1")).await;
    assert_eq!(first.status, 200, "{}", first.text);
    let cursor = first.body["next_cursor"].as_str().expect("two children: a next page").to_owned();
    let r = viewer.send(s, "GET", &list(theirs, &format!("cursor={cursor}"))).await;
    assert_eq!(r.status, 200, "the cursor on the list that issued it: {}", r.text);
    cases += 1;
    for elsewhere in [list(mine, &format!("cursor={cursor}")), format!("{base}{}?cursor={cursor}", child.path)] {
        let r = viewer.send(s, "GET", &elsewhere).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), ["cursor"], "{elsewhere}: a cursor of another list");
        cases += 1;
    }
    // Where children are seen only by their owners, `starting_after` cannot name
    // somebody else's under the same parent.
    if let Some(ann) = people.callers.iter().find(|w| w.label == "the parent's owner")
        && ann.reach(child.access.read) == Some(Reach::Own)
        && ann.reach(link.spec.access.read).is_some()
        && let Some(other) = my_children.iter().map(|c| Value::from(c.clone())).find(|c| owner_of(child, c) != ann.id)
    {
        let r = ann.send(s, "GET", &list(mine, &format!("starting_after={}", id_of(&other)))).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), ["starting_after"], "somebody else's child under one's own parent");
        cases += 1;
    }
    cases
}
