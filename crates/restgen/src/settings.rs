//! Settings read from the environment: the prefix of a service's variables, and numbers
//! that must be positive, each refused with its variable's name.

/// The prefix of a service's environment variables: `SHOP` for `shop`.
pub(crate) fn env_prefix(service: &str) -> String {
    service.to_ascii_uppercase().replace('-', "_")
}

/// The environment variable `name` (through `var`) as a positive number `positive` admits:
/// `None` when it is unset or empty, an error naming it when it is something else.
pub(crate) fn positive_var<T: std::str::FromStr>(
    name: &str,
    var: impl Fn(&str) -> Option<String>,
    positive: impl Fn(&T) -> bool,
) -> Result<Option<T>, String> {
    number_var(name, var, "a positive number", positive)
}

/// The environment variable `name` (through `var`) as a number `admits` admits, `what` it
/// must be saying which: `None` when it is unset or empty, an error naming it otherwise.
pub(crate) fn number_var<T: std::str::FromStr>(
    name: &str,
    var: impl Fn(&str) -> Option<String>,
    what: &str,
    admits: impl Fn(&T) -> bool,
) -> Result<Option<T>, String> {
    match var(name).filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(text) => match text.trim().parse::<T>() {
            Ok(n) if admits(&n) => Ok(Some(n)),
            _ => Err(format!("{name} must be {what}, not `{text}`")),
        },
    }
}
