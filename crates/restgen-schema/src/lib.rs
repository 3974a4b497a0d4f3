//! restgen's YAML front-end: a schema file in, the model out, with every node's file,
//! line and column kept so each problem is reported where it was written.
//!
//! Stages: `yaml` (text -> node tree with positions) -> `lower` (tree -> model, defaults
//! applied) -> restgen-core's checks (model -> diagnostics).

mod lower;
pub mod yaml;

use restgen_core::Diagnostics;
use restgen_core::model::Service;
use std::sync::Arc;

/// Parses and lowers `text`, the contents of the schema file `file`, without the semantic
/// checks. Structural problems go to `diags`; the model is built as far as it can be.
pub fn lower(file: &str, text: &str, diags: &mut Diagnostics) -> Option<Service> {
    let file: Arc<str> = Arc::from(file);
    let root = yaml::parse(&file, text, diags)?;
    lower::service(&mut lower::read::Cx { diags }, &root)
}

/// Parses, lowers and checks a schema: the model when it is sound, else every problem
/// found (structural and semantic together, so one run reports them all).
pub fn load(file: &str, text: &str) -> Result<(Service, Diagnostics), Diagnostics> {
    let mut diags = Diagnostics::new();
    let service = lower(file, text, &mut diags);
    if let Some(service) = &service {
        restgen_core::check::check(service, &mut diags);
    }
    match service {
        Some(service) if !diags.has_errors() => Ok((service, diags)),
        _ => Err(diags),
    }
}

/// The schema as JSON (plain scalars read by the YAML 1.2 core schema), for validating
/// it against the JSON Schema of the format.
pub fn to_json(file: &str, text: &str) -> Option<serde_json::Value> {
    let mut diags = Diagnostics::new();
    let root = yaml::parse(&Arc::from(file), text, &mut diags)?;
    Some(lower::read::to_json(&root))
}
