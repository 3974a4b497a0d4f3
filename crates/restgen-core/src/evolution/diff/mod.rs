//! What a schema change does to the clients of each version already served: every change
//! to resources, fields, operations, transitions, access and paths, classified breaking
//! or compatible (or a security change, where access widens), by the rules of
//! `docs/evolution.md`. Each served version is compared as it shows itself (fields gated
//! out of it are not in it), so a breaking change confined to a new version is not one.

mod field;
mod render;
mod resource;

pub use render::{render, render_json};
use resource::resource;

use super::pairing::partner;
use crate::diagnostics::Diagnostics;
use crate::model::*;
use crate::origin::Origin;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A client of the version may fail: it needs a new version.
    Breaking,
    /// Who may do what widened: deliberate, or a hole.
    Security,
    /// Clients of the version go on working.
    Compatible,
}

impl Class {
    pub fn word(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::Security => "security",
            Class::Compatible => "compatible",
        }
    }
}

/// One change, in the versions it lands in.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub class: Class,
    /// A stable name of the kind of change: `field-removed`.
    pub kind: &'static str,
    /// The resource it is in (the new name), or `""` for the API as a whole.
    pub resource: String,
    pub message: String,
    /// Where it was in the old schema, and is in the new one (`Unknown` where it is not).
    pub before: Origin,
    pub after: Origin,
    /// The served versions it lands in; empty for an unversioned API.
    pub versions: Vec<u32>,
}

/// Every change between two schemas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The versions the old schema serves (empty: unversioned).
    pub served: Vec<u32>,
    pub changes: Vec<Change>,
}

impl Report {
    pub fn count(&self, class: Class) -> usize {
        self.changes.iter().filter(|c| c.class == class).count()
    }
}

/// The changes from `old` to `new`.
pub fn diff(old: &Service, new: &Service) -> Report {
    let served: Vec<u32> = old.version_numbers().collect();
    let mut changes: Vec<Change> = Vec::new();
    if served.is_empty() {
        compare(old, new, None, &mut changes);
        return Report { served, changes };
    }
    let declared: Vec<u32> = new.version_numbers().collect();
    for v in &served {
        if !declared.contains(v) {
            let before = old.api.versions.iter().find(|x| x.number.value == *v).map(|x| x.number.origin.clone());
            changes.push(Change {
                class: Class::Breaking,
                kind: "version-removed",
                resource: String::new(),
                message: format!("version {v} is no longer served"),
                before: before.unwrap_or_default(),
                after: Origin::Unknown,
                versions: vec![*v],
            });
            continue;
        }
        let mut here = Vec::new();
        compare(&old.at_version(*v), &new.at_version(*v), Some(*v), &mut here);
        for c in here {
            // One change seen in several versions is reported once, with all of them.
            match changes.iter_mut().find(|x| x.kind == c.kind && x.resource == c.resource && x.message == c.message) {
                Some(x) => x.versions.push(*v),
                None => changes.push(c),
            }
        }
    }
    for v in declared.iter().filter(|v| !served.contains(v)) {
        let after = new.api.versions.iter().find(|x| x.number.value == *v).map(|x| x.number.origin.clone());
        changes.push(Change {
            class: Class::Compatible,
            kind: "version-added",
            resource: String::new(),
            message: format!("version {v} is added"),
            before: Origin::Unknown,
            after: after.unwrap_or_default(),
            versions: Vec::new(),
        });
    }
    Report { served, changes }
}

/// Collects changes of one version (`None`: the unversioned API).
struct Cx<'a> {
    out: &'a mut Vec<Change>,
    version: Option<u32>,
    resource: String,
    /// Resources renamed, old name to new: a ref to one is the same ref.
    renamed: &'a BTreeMap<String, String>,
    /// The admin roles of either schema: they reach every record and field whatever a
    /// list says, so a list gaining or losing one changes nothing.
    admins: &'a [String],
}

impl Cx<'_> {
    fn push(&mut self, class: Class, kind: &'static str, message: String, before: &Origin, after: &Origin) {
        self.out.push(Change {
            class,
            kind,
            resource: self.resource.clone(),
            message,
            before: before.clone(),
            after: after.clone(),
            versions: self.version.into_iter().collect(),
        });
    }
}

fn compare(old: &Service, new: &Service, version: Option<u32>, out: &mut Vec<Change>) {
    // Renames are judged (and reported) by `restgen generate`; here they only pair.
    let mut quiet = Diagnostics::new();
    let mut continued = BTreeSet::new();
    let mut pairs = Vec::new();
    let mut renamed = BTreeMap::new();
    let admins: Vec<String> =
        [old, new].iter().flat_map(|s| s.auth.iter().flat_map(|a| &a.admin_roles)).map(|r| r.value.clone()).collect();
    for r in &new.resources {
        let p = partner(
            "resource",
            &r.name.value,
            r.renamed_from.as_ref(),
            &|n| old.resource(n).is_some(),
            &|n| new.resource(n).is_some(),
            &mut quiet,
        );
        let o = p.old_name(&r.name.value).and_then(|n| old.resource(n));
        if let Some(o) = o {
            renamed.insert(o.name.value.clone(), r.name.value.clone());
        }
        pairs.push((r, o));
    }
    for (r, o) in pairs {
        let mut cx = Cx { out, version, resource: r.name.value.clone(), renamed: &renamed, admins: &admins };
        match o {
            None => cx.push(
                Class::Compatible,
                "resource-added",
                format!("resource `{}` is added at {}", r.name.value, r.path.value),
                &Origin::Unknown,
                &r.name.origin,
            ),
            Some(o) => {
                continued.insert(o.name.value.clone());
                if o.name.value != r.name.value {
                    cx.push(
                        Class::Compatible,
                        "resource-renamed",
                        format!(
                            "resource `{}` is renamed `{}`: the wire is the same, the names of its types in the OpenAPI document and generated clients change",
                            o.name.value, r.name.value
                        ),
                        &o.name.origin,
                        &r.name.origin,
                    );
                }
                resource(&mut cx, o, r);
            }
        }
    }
    for o in old.resources.iter().filter(|o| !continued.contains(&o.name.value)) {
        let mut cx = Cx { out, version, resource: o.name.value.clone(), renamed: &renamed, admins: &admins };
        cx.push(
            Class::Breaking,
            "resource-removed",
            format!("resource `{}` at {} is removed", o.name.value, o.path.value),
            &o.name.origin,
            &Origin::Unknown,
        );
    }
}
