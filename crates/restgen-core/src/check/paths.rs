//! URL paths: their shape, and that no two routes claim the same place.

use crate::diagnostics::{Diagnostics, codes};
use crate::model::{Resource, Scheme, Service, Versioning};
use crate::origin::Origin;
use restgen_model::bounds;
use std::collections::HashMap;

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    let base = &service.api.base_path;
    if !base.value.is_empty() {
        path_shape("`base_path`", &base.value, &base.origin, diags);
    }
    for r in &service.resources {
        resource(r, diags);
    }
    if let Some(auth) = &service.auth {
        path_shape("`login.path`", &auth.login.path.value, &auth.login.path.origin, diags);
    }
    no_clashes(service, diags);
}

pub(super) fn resource(resource: &Resource, diags: &mut Diagnostics) {
    path_shape("`path`", &resource.path.value, &resource.path.origin, diags);
    for old in &resource.former_paths {
        path_shape("`former_paths` entry", &old.value, &old.origin, diags);
    }
}

/// Reports that two claims clash, at the one the user wrote (built-in routes have no
/// origin).
fn report_clash(mine: &(String, String, Origin), theirs: &(String, String, Origin), diags: &mut Diagnostics) {
    let (here, there) = if matches!(mine.2, Origin::Unknown) { (theirs, mine) } else { (mine, theirs) };
    let relation = if here.0 == there.0 { "is also" } else { "overlaps" };
    let d = diags.error(
        codes::PATH_CLASH,
        &here.2,
        format!("{} `{}` {relation} {} `{}`", here.1, here.0, there.1, there.0),
    );
    if !matches!(there.2, Origin::Unknown) {
        d.related(&there.2, "claimed here");
    }
}

/// A path is `/` followed by lowercase segments of letters, digits, `-` and `_`, with no
/// trailing slash and no parameters: the item path is derived from it.
///   path: orders        # rejected: no leading slash
///   path: /orders/{id}  # rejected: restgen adds the item path itself
fn path_shape(what: &str, path: &str, origin: &Origin, diags: &mut Diagnostics) {
    let problem = if !path.starts_with('/') {
        Some("does not start with `/`")
    } else if path.len() > 1 && path.ends_with('/') {
        Some("ends with `/`")
    } else if path.contains(['{', '}', ':', '*']) {
        Some("holds a parameter; the item path `{path}/{<name>_id}` is added by restgen")
    } else if path == "/" {
        Some("is the root; give the collection a name")
    } else if !path[1..].split('/').all(|seg| {
        !seg.is_empty()
            && seg.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && seg.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    }) {
        Some("has a segment that is not lowercase letters, digits, `-` and `_`")
    } else {
        None
    };
    if let Some(problem) = problem {
        diags.error(codes::BAD_PATH, origin, format!("{what} `{path}` {problem}"));
    }
}

/// No two routes may claim the same URL: collection paths, former paths (which redirect),
/// the login and API-key endpoints, `/webhooks`, `/healthz`, `/readyz` and `/openapi.json`; nor may a
/// collection sit inside another one's item routes (`/orders/archive` vs `/orders/{id}`),
/// nor look like a version prefix when versions are picked by path.
fn no_clashes(service: &Service, diags: &mut Diagnostics) {
    let mut claimed: Vec<(String, String, Origin)> = Vec::new();
    for r in &service.resources {
        claimed.push((r.path.value.clone(), format!("the path of `{}`", r.name.value), r.path.origin.clone()));
        for old in &r.former_paths {
            claimed.push((old.value.clone(), format!("a former path of `{}`", r.name.value), old.origin.clone()));
        }
    }
    if let Some(auth) = &service.auth {
        let origin = auth.login.path.origin.clone();
        if auth.principal.is_some() {
            claimed.push((auth.login.path.value.clone(), "the login endpoint".into(), origin.clone()));
        }
        if auth.has_scheme(Scheme::ApiKey) {
            claimed.push(("/auth/api-keys".into(), "the API key endpoint".into(), auth.origin.clone()));
        }
    }
    if service.has_events() {
        claimed.push(("/webhooks".into(), "the webhook registration endpoint".into(), Origin::Unknown));
    }
    claimed.push((bounds::LIVENESS_PATH.into(), "the liveness probe".into(), Origin::Unknown));
    claimed.push((bounds::READINESS_PATH.into(), "the readiness probe".into(), Origin::Unknown));
    claimed.push((bounds::document_path(None, false), "the OpenAPI document".into(), Origin::Unknown));
    claimed.push((bounds::document_path(None, true), "the OpenAPI 3.0 document".into(), Origin::Unknown));
    if service.api.docs {
        claimed.push((bounds::DOCS_PATH.into(), "the reference page".into(), Origin::Unknown));
    }

    // Indexed by path and by every proper prefix, so each claim is compared with the
    // earlier ones in time linear in the number of claims.
    let mut exact: HashMap<&str, usize> = HashMap::new();
    let mut below: HashMap<&str, usize> = HashMap::new();
    for (i, (path, _, _)) in claimed.iter().enumerate() {
        let ancestors = path.match_indices('/').map(|(at, _)| &path[..at]).filter(|p| !p.is_empty());
        let earlier = exact
            .get(path.as_str())
            .or_else(|| below.get(path.as_str()))
            .or_else(|| ancestors.clone().find_map(|a| exact.get(a)))
            .copied();
        if let Some(j) = earlier {
            report_clash(&claimed[i], &claimed[j], diags);
        }
        exact.entry(path).or_insert(i);
        for a in ancestors {
            below.entry(a).or_insert(i);
        }
    }
    if service.api.versioning.iter().any(|v| v.value == Versioning::Path) && !service.api.versions.is_empty() {
        for r in &service.resources {
            let first = r.path.value.trim_start_matches('/').split('/').next().unwrap_or("");
            if first.len() > 1 && first.starts_with('v') && first[1..].bytes().all(|b| b.is_ascii_digit()) {
                diags.error(
                    codes::PATH_CLASH,
                    &r.path.origin,
                    format!("path `{}` looks like a version prefix", r.path.value),
                );
            }
        }
    }
}
