//! The two front-ends agree: the shop written with the derive macros
//! (`tests/derive/shop.rs`, which the end-to-end suite also serves) lowers to the very
//! model the YAML front-end builds from `examples/shop/shop.yaml`, resource for resource,
//! and so to identical inputs and handler specs through the one set of emitters.

use restgen_core::model::Service;
use restgen_derive::{Context, Lowered, lower_resource};

const SHOP_YAML: &str = "examples/shop/shop.yaml";

fn derived(context: &Context) -> Vec<Lowered> {
    let file = syn::parse_file(include_str!("../derive/shop.rs")).expect("the derived shop is Rust");
    file.items
        .into_iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(syn::DeriveInput::from(s)),
            _ => None,
        })
        .map(|input| lower_resource(&input, context).unwrap_or_else(|e| panic!("{}: {e}", input.ident)))
        .collect()
}

/// The service facts the schema gives, as a resource seen alone is lowered with them.
fn context(service: &Service) -> Context {
    Context {
        auth: service.auth.is_some(),
        pagination: service.pagination.clone(),
        roles: service.auth.iter().flat_map(|a| &a.roles).map(|r| r.value.clone()).collect(),
    }
}

fn text(tokens: proc_macro2::TokenStream) -> String {
    prettyplease::unparse(&syn::parse2(tokens).expect("emitted code is Rust"))
}

#[test]
fn the_derived_shop_has_the_schema_shops_model_and_code() {
    let schema = restgen_tests::load_valid(&restgen_tests::root().join(SHOP_YAML));
    let lowered = derived(&context(&schema));
    let names: Vec<&str> = lowered.iter().map(|l| l.resource.name.value.as_str()).collect();
    let schema_names: Vec<&str> = schema.resources.iter().map(|r| r.name.value.as_str()).collect();
    assert_eq!(names, schema_names, "the same resources, in the same order");
    for l in &lowered {
        let from_yaml = schema.resource(&l.resource.name.value).expect("named alike");
        assert_eq!(&l.resource, from_yaml, "the model of `{}`", from_yaml.name.value);
        // The code the emitters write from each: what a client's body lands in, and the
        // spec the shared handlers follow (other resources reached alike on both sides).
        let emit = |service: &Service, resource| {
            let inputs = restgen_core::emit::derived::inputs(service, resource);
            let spec = restgen_core::emit::derived::spec(service, resource, &l.others);
            (text(inputs), text(spec))
        };
        assert_eq!(
            emit(&l.service, &l.resource),
            emit(&schema, from_yaml),
            "the code emitted for `{}`",
            from_yaml.name.value
        );
    }
}
