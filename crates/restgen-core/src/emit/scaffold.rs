//! Files written once and then owned by the user: rendered from minijinja templates.

use super::{EmitError, Options, RuntimeDep};
use crate::model::Service;
use minijinja::{Environment, UndefinedBehavior, context};

/// Template name and the file it renders, relative to the crate root.
const TEMPLATES: &[(&str, &str, &str)] = &[
    ("Cargo.toml.j2", "Cargo.toml", include_str!("../../templates/service/Cargo.toml.j2")),
    ("lib.rs.j2", "src/lib.rs", include_str!("../../templates/service/lib.rs.j2")),
    ("main.rs.j2", "src/main.rs", include_str!("../../templates/service/main.rs.j2")),
    ("hooks.rs.j2", "src/hooks.rs", include_str!("../../templates/service/hooks.rs.j2")),
];

const CLIENT_MANIFEST: &str = include_str!("../../templates/client/Cargo.toml.j2");

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .build()
        .expect("the default delimiters are valid");
    env.set_syntax(syntax);
    for (name, _, source) in TEMPLATES {
        env.add_template(name, source).expect("templates are checked by a test");
    }
    env.add_template("client/Cargo.toml.j2", CLIENT_MANIFEST).expect("templates are checked by a test");
    env
}

fn dependency(dep: &RuntimeDep) -> String {
    match dep {
        RuntimeDep::Path(p) => format!("{{ path = {} }}", toml_string(p)),
        RuntimeDep::Version(v) => toml_string(v),
    }
}

/// One line: the title lands in comments and TOML strings, where a newline would end them.
fn title(service: &Service) -> String {
    service.title.as_deref().map_or_else(
        || format!("The {} service", service.name.value),
        |t| t.split_whitespace().collect::<Vec<_>>().join(" "),
    )
}

/// The client crate's `Cargo.toml`: generated (always rewritten), since nothing in a
/// client crate is the user's.
pub(crate) fn client_manifest(service: &Service, options: &Options) -> Result<String, EmitError> {
    let ctx = context! {
        name => &service.name.value,
        description => toml_string(&format!("Typed client of {}", title(service))),
        source_name => &options.source_name,
        runtime => dependency(&options.client_runtime),
    };
    let name = "client/Cargo.toml.j2";
    environment().get_template(name).and_then(|t| t.render(&ctx)).map_err(|e| err(name, e))
}

pub(crate) fn render(service: &Service, options: &Options) -> Result<Vec<(&'static str, String)>, EmitError> {
    let resources: Vec<_> = service
        .resources
        .iter()
        .map(|r| context! { name => &r.name.value, path => format!("{}{}", service.api.base_path.value, r.path.value) })
        .collect();
    let example = service.resources.iter().find(|r| r.has(crate::model::Operation::Create)).map(|r| {
        context! {
            method => format!("before_create_{}", r.name.value),
            input => format!("Create{}", super::names::type_name(&r.name.value)),
        }
    });
    let mut used = restgen_model::features::databases(&options.databases);
    used.extend(restgen_model::features::used(service));
    let widest = used.iter().map(|f| f.name.len()).max().unwrap_or(0);
    let features: Vec<_> = used
        .iter()
        .map(|f| context! { name => toml_string(f.name), pad => widest - f.name.len(), why => &f.why })
        .collect();
    let runtime_source = match &options.runtime {
        RuntimeDep::Path(p) => format!("path = {}", toml_string(p)),
        RuntimeDep::Version(v) => format!("version = {}", toml_string(v)),
    };
    let ctx = context! {
        example,
        features,
        runtime_source,
        name => &service.name.value,
        title => title(service),
        description => service.description.as_deref().map(toml_string),
        source_name => &options.source_name,
        resources,
        resource_count => service.resources.len(),
        crate_name => service.name.value.replace('-', "_"),
        workspace_member => options.workspace_member,
        build_profiles => super::BUILD_PROFILES,
    };
    let env = environment();
    TEMPLATES
        .iter()
        .map(|(name, path, _)| {
            let template = env.get_template(name).map_err(|e| err(name, e))?;
            template.render(&ctx).map(|s| (*path, s)).map_err(|e| err(name, e))
        })
        .collect()
}

fn err(name: &str, e: minijinja::Error) -> EmitError {
    let dir =
        if name.contains('/') { "crates/restgen-core/templates" } else { "crates/restgen-core/templates/service" };
    EmitError { file: format!("{dir}/{name}"), message: format!("{e:#}") }
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_template_parses() {
        let env = super::environment();
        for (name, _, _) in super::TEMPLATES {
            assert!(env.get_template(name).is_ok(), "{name}");
        }
    }
}
