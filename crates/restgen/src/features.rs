//! What a service's build must turn on: `require!`, which generated code and derive
//! expansions call once for each part of the runtime their schema uses. With the part's
//! cargo feature off, the build fails there with a message naming the feature and why the
//! schema needs it, instead of at run time or with an error about a missing item.

/// `require!(feature, "why")`: nothing when this build of the runtime has `feature`; a
/// compile error naming it and `why` when it does not. Not the databases: a build keeps
/// the ones its deployment uses, whatever the schema says.
#[doc(hidden)]
#[macro_export]
macro_rules! require {
    (webhooks, $why:literal) => {
        $crate::__require_webhooks!($why);
    };
    (jwt_hs256, $why:literal) => {
        $crate::__require_jwt_hs256!($why);
    };
    (jwt_rs256, $why:literal) => {
        $crate::__require_jwt_rs256!($why);
    };
    (jwt_es256, $why:literal) => {
        $crate::__require_jwt_es256!($why);
    };
    (password, $why:literal) => {
        $crate::__require_password!($why);
    };
    (patterns, $why:literal) => {
        $crate::__require_patterns!($why);
    };
    (csv, $why:literal) => {
        $crate::__require_csv!($why);
    };
    (docs, $why:literal) => {
        $crate::__require_docs!($why);
    };
}

/// One macro per feature: present when the feature is on, a compile error when it is off.
/// (`$d` is a `$` handed down, so the macros made can have parameters of their own.)
macro_rules! features {
    ($d:tt $($feature:literal => $name:ident),* $(,)?) => {$(
        #[cfg(feature = $feature)]
        #[doc(hidden)]
        #[macro_export]
        macro_rules! $name {
            ($d why:literal) => {};
        }

        #[cfg(not(feature = $feature))]
        #[doc(hidden)]
        #[macro_export]
        macro_rules! $name {
            ($d why:literal) => {
                ::core::compile_error!(::core::concat!(
                    "this service needs the `", $feature, "` feature of restgen (", $d why, "), and its build ",
                    "leaves it out: add \"", $feature, "\" to the `features` of the `restgen` dependency in Cargo.toml"
                ));
            };
        }
    )*};
}

features! {
    $
    "webhooks" => __require_webhooks,
    "jwt-hs256" => __require_jwt_hs256,
    "jwt-rs256" => __require_jwt_rs256,
    "jwt-es256" => __require_jwt_es256,
    "password" => __require_password,
    "patterns" => __require_patterns,
    "csv" => __require_csv,
    "docs" => __require_docs,
}
