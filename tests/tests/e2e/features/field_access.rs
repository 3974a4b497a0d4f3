//! Field-level access (`read`, `write`), driven by the shop's specs: every field of every
//! resource that has such a list, met by every kind of caller (the owner, another account,
//! each role the lists name, an admin, nobody), everywhere it shows or is set: the item,
//! the list, CSV, filters, sorts, writes, ETags and `If-Match`. The expectations are the
//! rules' words read plainly, not the runtime's functions.

use crate::backends;
use crate::support::accounts::{Account, admin, call, register, with_role};
use crate::support::harness::{Reply, Server};
use crate::support::receiver::Receiver;
use restgen::spec::{FieldKind, FieldSpec, Format, ResourceSpec, Rule};
use serde_json::{Value, json};

/// A kind of caller: signed in as `account` (or not), holding `roles`.
struct Who {
    label: &'static str,
    account: Option<Account>,
    roles: Vec<&'static str>,
    admin: bool,
}

impl Who {
    /// Whether `rules` admit this caller to a record that is theirs (`owns`) or not.
    fn admitted(&self, rules: &[Rule], owns: bool) -> bool {
        self.admin
            || rules.iter().any(|rule| match rule {
                Rule::Anyone => true,
                Rule::Authenticated => self.account.is_some(),
                Rule::Owner => owns && self.account.is_some(),
                Rule::Role(role) => self.roles.contains(role),
            })
    }

    /// Whether they may see `f` on a record they may read.
    fn sees(&self, f: &FieldSpec, owns: bool) -> bool {
        f.read.is_none_or(|rules| self.admitted(rules, owns))
    }

    /// Whether they may set `f` on a record they may write.
    fn sets(&self, f: &FieldSpec, owns: bool) -> bool {
        f.write.is_none_or(|rules| self.admitted(rules, owns))
    }

    /// Whether they may filter or sort a list of `spec` on `f`: where they see it on
    /// every record the list could show them.
    fn queries(&self, spec: &ResourceSpec, f: &FieldSpec) -> bool {
        let own_list_only = !self.admitted(spec.access.read, false);
        self.sees(f, false) || (own_list_only && self.sees(f, true))
    }

    async fn send(&self, s: &Server, method: &str, path: &str, body: Option<Value>, headers: &[(&str, &str)]) -> Reply {
        let bearer = self.account.as_ref().map(Account::bearer);
        let mut all: Vec<(&str, &str)> = headers.to_vec();
        if let Some(b) = &bearer {
            all.push(("authorization", b));
        }
        s.send_with(method, path, body, &all).await
    }
}

/// A value `f` accepts, distinct per `n`.
fn value(f: &FieldSpec, n: u32) -> Value {
    match f.kind {
        FieldKind::String | FieldKind::Text => json!(format!("{}-{n}", f.name)),
        FieldKind::Email => json!(format!("{}{n}@example.com", f.name)),
        FieldKind::Integer => json!(n),
        FieldKind::Boolean => json!(n % 2 == 1),
        other => panic!("no sample value for a {other:?} field: teach this test one"),
    }
}

backends!(every_field_is_seen_and_set_as_its_rules_say, shop::service());
async fn every_field_is_seen_and_set_as_its_rules_say(s: Server) {
    let root = admin(&s, "root").await;
    let mut callers = vec![
        Who { label: "the owner", account: Some(register(&s, "ann").await), roles: vec!["member"], admin: false },
        Who { label: "another account", account: Some(register(&s, "bob").await), roles: vec!["member"], admin: false },
        Who { label: "an admin", account: Some(root.clone()), roles: vec!["admin"], admin: true },
        Who { label: "nobody", account: None, roles: Vec::new(), admin: false },
    ];
    let guarded: Vec<&ResourceSpec> = shop::generated::resources::RESOURCES
        .iter()
        .copied()
        .filter(|r| r.fields.iter().any(|f| f.read.is_some() || f.write.is_some()))
        .collect();
    assert!(!guarded.is_empty(), "the shop shows field-level access");
    // Every role a list names has a caller holding it (and nothing else).
    let mut roles: Vec<&'static str> = Vec::new();
    for f in guarded.iter().flat_map(|r| r.fields) {
        for rule in f.read.into_iter().chain(f.write).flatten() {
            if let Rule::Role(role) = rule
                && !roles.contains(role)
                && *role != "admin"
            {
                roles.push(role);
            }
        }
    }
    for (i, role) in roles.iter().enumerate() {
        let account = with_role(&s, &root, &format!("role{i}"), role).await;
        callers.push(Who { label: role, account: Some(account), roles: vec![role], admin: false });
    }
    for spec in guarded {
        matrix(&s, spec, &callers).await;
    }
}

async fn matrix(s: &Server, spec: &ResourceSpec, callers: &[Who]) {
    assert!(spec.owner.is_some(), "`{}`: this test creates records as their owner", spec.name);
    let base = format!("/api{}", spec.path);
    let owner = &callers[0];
    let whose = |w: &Who| std::ptr::eq(w, owner);

    // Created by the owner with every field they may set there; one they may not is refused
    // by name, as a field that is not settable is.
    let mut body = serde_json::Map::new();
    for f in spec.fields.iter().filter(|f| f.create) {
        if owner.sets(f, true) {
            body.insert(f.name.into(), value(f, 1));
        } else {
            let mut more = body.clone();
            more.insert(f.name.into(), value(f, 1));
            let r = owner.send(s, "POST", &base, Some(Value::Object(more)), &[]).await;
            assert_eq!(r.status, 400, "{}: `{}` set at create by {}: {}", spec.name, f.name, owner.label, r.text);
            assert_eq!(r.error_fields(), [f.name]);
        }
    }
    let key = [("idempotency-key", "field-access-1")];
    let r = owner.send(s, "POST", &base, Some(Value::Object(body.clone())), &key).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let item = format!("{base}/{}", r.body["id"].as_str().expect("an id"));
    // A retry is answered with the first answer: the owner's view of the record.
    let replay = owner.send(s, "POST", &base, Some(Value::Object(body)), &key).await;
    assert_eq!((replay.status, replay.header("idempotent-replayed")), (201, Some("true")), "{}", replay.text);
    assert_eq!(replay.body, r.body);
    for f in spec.fields.iter().filter(|f| !f.write_only) {
        assert_eq!(r.body.get(f.name).is_some(), owner.sees(f, true), "{}.{} created: {}", spec.name, f.name, r.text);
    }

    // Every guarded field patched by each caller who may write the record: taken from those
    // its `write` admits, refused by name from the others.
    let guarded: Vec<&FieldSpec> = spec.fields.iter().filter(|f| f.read.is_some() || f.write.is_some()).collect();
    for (n, f) in guarded.iter().filter(|f| f.patch).enumerate() {
        for who in callers.iter().filter(|w| w.admitted(spec.access.write, whose(w))) {
            let r = who.send(s, "PATCH", &item, Some(json!({ f.name: value(f, 10 + n as u32) })), &[]).await;
            if who.sets(f, whose(who)) {
                assert_eq!(r.status, 200, "{}.{} patched by {}: {}", spec.name, f.name, who.label, r.text);
                assert_eq!(r.body.get(f.name).is_some(), who.sees(f, whose(who)), "{}: {}", who.label, r.text);
            } else {
                assert_eq!(r.status, 400, "{}.{} patched by {}: {}", spec.name, f.name, who.label, r.text);
                assert_eq!(r.error_fields(), [f.name], "{}", r.text);
            }
        }
    }

    for who in callers {
        let owns = whose(who);
        let what = |f: &FieldSpec| format!("{}.{} to {}", spec.name, f.name, who.label);
        // The item, and the same record in the list.
        let got = who.send(s, "GET", &item, None, &[]).await;
        if !who.admitted(spec.access.read, owns) {
            assert!([401, 403, 404].contains(&got.status), "{}: {}", who.label, got.text);
            continue;
        }
        assert_eq!(got.status, 200, "{}", got.text);
        let list = who.send(s, "GET", &base, None, &[]).await;
        assert_eq!(list.status, 200, "{}", list.text);
        let items = list.body.as_array().or_else(|| list.body["data"].as_array()).expect("a page");
        let listed = items.iter().find(|i| i["id"] == got.body["id"]).expect("the record in the list");
        for f in spec.fields.iter().filter(|f| !f.write_only) {
            let sees = who.sees(f, owns);
            assert_eq!(got.body.get(f.name).is_some(), sees, "{}: {}", what(f), got.text);
            assert_eq!(listed.get(f.name).is_some(), sees, "{} in the list: {listed}", what(f));
        }
        // The lists of the owner's records under each parent that is the owner's account,
        // for those the parent's own rules admit.
        for parent in spec.parents.iter().filter(|p| p.column == "owner_id") {
            let owner_id = got.body["owner_id"].as_str().expect("an owner");
            let nested = who.send(s, "GET", &format!("/api{}/{owner_id}{}", parent.path, spec.path), None, &[]).await;
            if !who.admitted(parent.spec.access.read, owns) {
                assert!([401, 403, 404].contains(&nested.status), "{}: {}", who.label, nested.text);
                continue;
            }
            assert_eq!(nested.status, 200, "{}", nested.text);
            let items = nested.body.as_array().or_else(|| nested.body["data"].as_array()).expect("a page");
            let listed = items.iter().find(|i| i["id"] == got.body["id"]).expect("the record under its parent");
            for f in spec.fields.iter().filter(|f| !f.write_only) {
                let (sees, text) = (who.sees(f, owns), what(f));
                assert_eq!(listed.get(f.name).is_some(), sees, "{text} under `{}`: {listed}", parent.resource);
            }
        }
        // CSV: a column for what they see.
        if spec.formats.contains(&Format::Csv) {
            let csv = who.send(s, "GET", &item, None, &[("accept", "text/csv")]).await;
            assert_eq!(csv.status, 200, "{}", csv.text);
            let header: Vec<&str> = csv.text.lines().next().unwrap_or_default().split(',').collect();
            for f in spec.fields.iter().filter(|f| !f.write_only) {
                assert_eq!(header.contains(&f.name), who.sees(f, owns), "{} as CSV: {header:?}", what(f));
            }
        }
        // Filters and sorts: a field they may not see everywhere is unknown to them.
        for f in guarded.iter().filter(|f| f.filter || f.sort) {
            let queries = who.queries(spec, f);
            if f.filter {
                let v = value(f, 1);
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                let r = who.send(s, "GET", &format!("{base}?{}={text}", f.name), None, &[]).await;
                match queries {
                    true => assert_eq!(r.status, 200, "{} filtered: {}", what(f), r.text),
                    false => {
                        assert_eq!(r.status, 400, "{} filtered: {}", what(f), r.text);
                        assert_eq!(r.error_fields(), [f.name]);
                    }
                }
            }
            if f.sort {
                let r = who.send(s, "GET", &format!("{base}?sort={}_desc", f.name), None, &[]).await;
                assert_eq!(r.status, if queries { 200 } else { 400 }, "{} sorted: {}", what(f), r.text);
            }
        }
    }

    // ETags are of what the caller is shown: a change to a field is news to those who see
    // it, and to the others only as the new `updated_at` (which they see change with every
    // write), never as the field.
    for (n, f) in guarded.iter().filter(|f| f.patch).enumerate() {
        let writer =
            callers.iter().find(|w| w.admitted(spec.access.write, whose(w)) && w.sets(f, whose(w)) && !w.admin);
        let Some(writer) = writer else { continue };
        let readers: Vec<&Who> = callers.iter().filter(|w| w.admitted(spec.access.read, whose(w))).collect();
        let mut before = Vec::new();
        for who in &readers {
            before.push(who.send(s, "GET", &item, None, &[]).await);
        }
        let new_value = value(f, 100 + n as u32);
        let r = writer.send(s, "PATCH", &item, Some(json!({ f.name: new_value })), &[]).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let without_time = |v: &Value| {
            let mut v = v.clone();
            v.as_object_mut().expect("a record").remove("updated_at");
            v
        };
        for (who, old) in readers.iter().zip(&before) {
            let tag = old.header("etag").expect("a tag");
            let r = who.send(s, "GET", &item, None, &[("if-none-match", tag)]).await;
            let what = format!("{}.{} changed, then read by {}", spec.name, f.name, who.label);
            if who.sees(f, whose(who)) {
                assert_eq!((r.status, &r.body[f.name]), (200, &new_value), "{what}: {}", r.text);
            } else if spec.timestamps {
                assert_eq!(r.status, 200, "{what}: `updated_at` moved");
                assert_eq!(without_time(&r.body), without_time(&old.body), "{what}: only `updated_at` is news");
            } else {
                assert_eq!(r.status, 304, "{what}");
            }
            // Read again with the new tag: nothing more to learn.
            let again = who.send(s, "GET", &item, None, &[("if-none-match", r.header("etag").unwrap_or(tag))]).await;
            assert_eq!(again.status, 304, "{what}, then again");
        }
    }

    // `If-Match` takes the tag the caller read, and only that: callers who see different
    // fields hold different tags.
    let writers: Vec<&Who> = callers.iter().filter(|w| w.admitted(spec.access.write, whose(w)) && !w.admin).collect();
    let tags: Vec<String> = {
        let mut tags = Vec::new();
        for who in &writers {
            tags.push(who.send(s, "GET", &item, None, &[]).await.header("etag").expect("a tag").to_owned());
        }
        tags
    };
    for (i, who) in writers.iter().enumerate() {
        for (j, tag) in tags.iter().enumerate().filter(|(j, t)| *j != i && **t != tags[i]) {
            let r = who.send(s, "PATCH", &item, Some(json!({})), &[("if-match", tag)]).await;
            assert_eq!(r.status, 412, "{} writing with {}'s tag: {}", who.label, writers[j].label, r.text);
        }
        let r = who.send(s, "PATCH", &item, Some(json!({})), &[("if-match", &tags[i])]).await;
        assert_eq!(r.status, 200, "{} writing with their own tag: {}", who.label, r.text);
    }
}

/// Subscribes `who` to every event of `spec` at `url`.
async fn subscribe(s: &Server, who: &Account, url: &str, spec: &ResourceSpec) {
    let events: Vec<String> = spec.events.iter().map(|e| format!("{}.{e}", spec.name)).collect();
    let r = call(s, who, "POST", "/api/webhooks", Some(json!({ "url": url, "events": events }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
}

backends!(a_delivery_shows_what_its_subscriber_may_read, shop::service());
async fn a_delivery_shows_what_its_subscriber_may_read(s: Server) {
    let spec = &shop::generated::resources::CUSTOMER;
    let field = |name: &str| spec.fields.iter().find(|f| f.name == name).expect("a field of the shop's customers");
    let (phone, note) = (field("phone"), field("staff_note"));
    let root = admin(&s, "root").await;
    let ann = register(&s, "ann").await;
    let sam = with_role(&s, &root, "sam", "staff").await;
    let (to_ann, to_sam) = (Receiver::start(&[]).await, Receiver::start(&[]).await);
    subscribe(&s, &ann, &to_ann.url, spec).await;
    subscribe(&s, &sam, &to_sam.url, spec).await;

    let made =
        call(&s, &ann, "POST", "/api/customers", Some(json!({ "name": "Ada", phone.name: value(phone, 1) }))).await;
    assert_eq!(made.status, 201, "{}", made.text);
    let item = format!("/api/customers/{}", made.body["id"].as_str().unwrap());
    let noted = call(&s, &sam, "PATCH", &item, Some(json!({ note.name: value(note, 2) }))).await;
    assert_eq!(noted.status, 200, "{}", noted.text);

    // Each subscriber receives both events, each record as they may read it.
    let staff = Who { label: "staff", account: Some(sam.clone()), roles: vec!["staff"], admin: false };
    let owner = Who { label: "the owner", account: Some(ann.clone()), roles: vec!["member"], admin: false };
    for (who, receiver, owns) in [(&owner, &to_ann, true), (&staff, &to_sam, false)] {
        let seen = receiver.wait_for(2).await;
        assert_eq!(seen.len(), 2, "{}", who.label);
        for delivery in &seen {
            let event = delivery.json();
            let data = &event["data"];
            assert_eq!(data["name"], "Ada", "{event}");
            for f in [phone, note] {
                assert_eq!(
                    data.get(f.name).is_some(),
                    who.sees(f, owns),
                    "`{}` delivered to {}: {event}",
                    f.name,
                    who.label
                );
            }
        }
    }
}
