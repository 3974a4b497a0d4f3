//! How the client proves who it is.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use restgen_wire::redact::Redacted;
use std::fmt;
use std::time::{Duration, Instant};

/// The credentials a client sends with every call (except logging in).
#[derive(Clone, Default)]
pub enum Auth {
    /// Anonymous: only operations open to `anyone` work.
    #[default]
    None,
    /// A bearer token obtained elsewhere; not renewed.
    Bearer(String),
    /// Log in at the service's login operation on first use, send the token as a bearer
    /// token, and log in again shortly before it expires or when the service refuses it
    /// (a restarted service with a new signing key, say).
    Login { identifier: String, password: String },
    /// An API key, in the header the service declares.
    ApiKey(String),
    /// HTTP Basic with the principal's identifier and password (the service verifies the
    /// password on every call: prefer `Login` or an API key for chatty clients).
    Basic { username: String, password: String },
}

impl Auth {
    pub fn login(identifier: impl Into<String>, password: impl Into<String>) -> Auth {
        Auth::Login { identifier: identifier.into(), password: password.into() }
    }

    pub fn bearer(token: impl Into<String>) -> Auth {
        Auth::Bearer(token.into())
    }

    pub fn api_key(key: impl Into<String>) -> Auth {
        Auth::ApiKey(key.into())
    }

    pub fn basic(username: impl Into<String>, password: impl Into<String>) -> Auth {
        Auth::Basic { username: username.into(), password: password.into() }
    }

    pub(crate) fn basic_header(username: &str, password: &str) -> String {
        format!("Basic {}", STANDARD.encode(format!("{username}:{password}")))
    }
}

/// Secrets stay out of logs.
impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::None => f.write_str("None"),
            Auth::Bearer(_) => f.debug_tuple("Bearer").field(&Redacted).finish(),
            Auth::Login { identifier, .. } => {
                f.debug_struct("Login").field("identifier", identifier).field("password", &Redacted).finish()
            }
            Auth::ApiKey(_) => f.debug_tuple("ApiKey").field(&Redacted).finish(),
            Auth::Basic { username, .. } => {
                f.debug_struct("Basic").field("username", username).field("password", &Redacted).finish()
            }
        }
    }
}

/// A token from logging in, and when to stop using it.
#[derive(Clone)]
pub(crate) struct Session {
    pub token: String,
    pub renew_at: Instant,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("token", &Redacted).field("renew_at", &self.renew_at).finish()
    }
}

impl Session {
    /// Renewed a tenth of its life before it expires, at most 30 seconds before: clocks
    /// differ and a call takes time.
    pub fn new(token: String, expires_in: u64, now: Instant) -> Session {
        let life = Duration::from_secs(expires_in);
        let margin = (life / 10).min(Duration::from_secs(30));
        Session { token, renew_at: now + (life - margin) }
    }

    pub fn fresh(&self, now: Instant) -> bool {
        now < self.renew_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_renew_before_they_expire() {
        let now = Instant::now();
        let long = Session::new("t".into(), 900, now);
        assert!(long.fresh(now + Duration::from_secs(869)));
        assert!(!long.fresh(now + Duration::from_secs(870)));
        let short = Session::new("t".into(), 10, now);
        assert!(short.fresh(now + Duration::from_secs(8)) && !short.fresh(now + Duration::from_secs(9)));
        assert!(!Session::new("t".into(), 0, now).fresh(now));
    }

    #[test]
    fn debug_output_hides_secrets() {
        let shown = format!(
            "{:?} {:?} {:?}",
            Auth::login("ann@example.com", "hunter22"),
            Auth::api_key("rk_1"),
            Auth::basic("ann", "pw")
        );
        assert!(!shown.contains("hunter22") && !shown.contains("rk_1") && !shown.contains("pw"), "{shown}");
        assert!(shown.contains("ann@example.com"));
    }
}

#[cfg(test)]
mod redaction {
    use super::{Auth, Session};

    /// Every credential a client holds shows as `***` when printed for debugging.
    #[test]
    fn credentials_and_sessions_show_no_secret() {
        let secret = "s3cret-value";
        for auth in [
            Auth::bearer(secret),
            Auth::api_key(secret),
            Auth::login("ann@example.com", secret),
            Auth::basic("ann@example.com", secret),
        ] {
            let shown = format!("{auth:?}");
            assert!(shown.contains("***") && !shown.contains(secret), "{shown}");
        }
        let session = Session::new(secret.to_owned(), 900, std::time::Instant::now());
        let shown = format!("{session:?}");
        assert!(shown.contains("***") && !shown.contains(secret), "{shown}");
    }
}
