//! What `#[derive(Resource)]` expands to, as insta snapshots of the formatted output:
//! reviewed like any generated code, and compiled by the end-to-end suite.

use quote::quote;

fn expand(input: proc_macro2::TokenStream) -> String {
    unparse(restgen_derive::resource(input))
}

/// An expansion as formatted Rust.
fn unparse(output: proc_macro2::TokenStream) -> String {
    prettyplease::unparse(&syn::parse2(output).expect("the expansion is Rust"))
}

#[test]
fn an_open_resource_with_an_enum_a_default_and_paging() {
    insta::assert_snapshot!(expand(quote! {
        /// A bookmark anyone may keep.
        #[resource(path = "/bookmarks", access(all = [anyone]), pagination(style = cursor, default_size = 2))]
        pub struct Bookmark {
            pub id: Uuid,
            #[field(settable, url, unique)]
            pub url: String,
            #[field(settable, min_length = 1, max_length = 80, sort)]
            pub title: String,
            #[field(settable(create, patch), text)]
            pub note: Option<String>,
            #[field(values(unread, read, archived), default = "unread", settable(patch), filter)]
            pub state: BookmarkState,
            /// Counted by the service, never by a client.
            #[field(default = 0, min = 0)]
            pub visits: i64,
            pub created_at: DateTime<Utc>,
            pub updated_at: DateTime<Utc>,
        }
    }));
}

#[test]
fn an_integer_resource_with_some_operations() {
    insta::assert_snapshot!(expand(quote! {
        #[resource(path = "/lists", operations(create, get, list, delete), pagination(style = offset))]
        pub struct List {
            pub id: i64,
            #[field(settable, max_length = 40)]
            pub name: String,
        }
    }));
}

#[test]
fn a_body_type_that_is_not_a_resource() {
    let output = restgen_derive::input(quote! {
        pub struct Feedback {
            #[field(settable, text, min_length = 1, max_length = 500)]
            pub message: String,
            #[field(settable, email)]
            pub reply_to: Option<String>,
            #[field(values(low, high), settable, default = "low")]
            pub urgency: FeedbackUrgency,
            pub trusted: bool,
            #[field(default = 3)]
            pub priority: i64,
        }
    });
    insta::assert_snapshot!(unparse(output));
}

#[test]
fn a_hand_written_enum_of_values() {
    let output = restgen_derive::enumeration(quote! {
        pub enum Fulfilment {
            Pickup,
            HomeDelivery,
            #[value = "locker_2"]
            Locker,
        }
    });
    insta::assert_snapshot!(unparse(output));
}

#[test]
fn a_resource_whose_field_is_a_hand_written_enum() {
    insta::assert_snapshot!(expand(quote! {
        #[resource(path = "/parcels", access(all = [anyone]), operations(create, get))]
        pub struct Parcel {
            pub id: Uuid,
            #[field(values(pickup, home_delivery, locker_2), settable, filter)]
            pub fulfilment: crate::Fulfilment,
        }
    }));
}

#[test]
fn a_resource_of_time_types() {
    insta::assert_snapshot!(expand(quote! {
        #[resource(path = "/bookings", access(all = [anyone]), operations(create, replace, patch))]
        pub struct Booking {
            pub id: Uuid,
            #[field(settable)]
            #[serde(with = "restgen::time")]
            pub starts_at: time::OffsetDateTime,
            #[field(settable, required)]
            #[serde(with = "restgen::time::option")]
            pub ends_at: Option<time::OffsetDateTime>,
            #[field(settable(create), default = "2030-01-01")]
            #[serde(with = "restgen::time")]
            pub book_until: time::Date,
            #[field(settable)]
            #[serde(with = "restgen::time::option")]
            pub day: Option<time::Date>,
        }
    }));
}

/// The shop written with the derive macros (the one the equivalence test holds to the
/// schema's): one snapshot per resource.
#[test]
fn the_shop_resources() {
    let file = syn::parse_file(include_str!("../../../tests/derive/shop.rs")).expect("Rust");
    for item in file.items {
        if let syn::Item::Struct(s) = item {
            let name = s.ident.to_string();
            insta::assert_snapshot!(format!("shop_{name}"), expand(quote!(#s)));
        }
    }
}

/// A `time` field must say how serde writes it: `with`, or both `serialize_with` and
/// `deserialize_with`; other serde keys (even one whose value mentions "with") do not.
#[test]
fn a_time_field_names_its_serde_form() {
    let says_it = |attr: proc_macro2::TokenStream| {
        let output = restgen_derive::resource(quote! {
            #[resource(path = "/slots", access(all = [anyone]))]
            pub struct Slot {
                pub id: Uuid,
                #[field(settable)]
                #attr
                pub at: time::OffsetDateTime,
            }
        })
        .to_string();
        !output.contains("holds a `time` type")
    };
    assert!(says_it(quote!(#[serde(with = "restgen::time")])));
    assert!(says_it(quote!(#[serde(rename = "when", serialize_with = "w", deserialize_with = "r")])));
    assert!(!says_it(quote!()));
    assert!(!says_it(quote!(#[serde(rename = "without")])));
    assert!(!says_it(quote!(#[serde(deserialize_with = "restgen::time::deserialize")])));
    assert!(!says_it(quote!(#[doc = "with"])));
}

/// Every key the derive takes is served: a resource that writes the lifecycle, links and
/// events has no warning to show.
#[test]
fn a_resource_with_every_key_warns_of_nothing() {
    let input: syn::DeriveInput = syn::parse_quote! {
        #[resource(path = "/notes", links, events(created))]
        pub struct Note {
            pub id: Uuid,
            #[field(settable)]
            pub text: String,
        }
    };
    let lowered =
        restgen_derive::lower_resource(&input, &restgen_derive::Context::default()).expect("a valid resource");
    assert!(lowered.warnings.is_empty(), "{:?}", lowered.warnings.iter().map(|w| &w.message).collect::<Vec<_>>());
}

/// A body type's patterns are checked as a resource's are: its expansion requires the
/// runtime's `patterns` feature where a field has one, and only there.
#[test]
fn a_body_type_with_a_pattern_requires_the_patterns_feature() {
    let require = "::restgen::require!(patterns,";
    let with = unparse(restgen_derive::input(quote! {
        pub struct Voucher {
            #[field(settable, pattern = "[A-Z]{4}-[0-9]{4}")]
            pub code: String,
        }
    }));
    assert!(with.contains(&format!("{require} \"`pattern` of voucher.code: regular expressions\");")), "{with}");
    let without = unparse(restgen_derive::input(quote! {
        pub struct Voucher {
            #[field(settable, max_length = 9)]
            pub code: String,
        }
    }));
    assert!(!without.contains(require), "{without}");
}
