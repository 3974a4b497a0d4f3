//! Services written by hand: structs with `#[derive(Resource)]` mounted on an [`App`],
//! which gathers their routes and tables into the same [`Service`] a generated crate
//! hands the runtime. Everything a resource does at run time is the runtime's shared
//! behaviour, whichever front-end described it.

use crate::routes::{Hooks, Input};
use crate::serve::{CorsSpec, Service};
use crate::spec::{AuthSpec, RateSpec, ResourceSpec};
use crate::store::{MigrationSpec, Store, Tables};
use axum::Router;
use std::process::ExitCode;
use std::time::Duration;

/// A resource the runtime can serve: what `#[derive(Resource)]` implements.
pub trait Resource: 'static {
    /// Snake case, singular: `order`.
    const NAME: &'static str;
    /// The collection path, without base path: `/orders`.
    const PATH: &'static str;
    /// The resource as the runtime's shared operations see it.
    const SPEC: &'static ResourceSpec;
    /// The allow-listed inputs of create, replace and patch (`()` where the operation is
    /// not offered).
    type Create: Input;
    type Replace: Input;
    type Patch: Input;

    /// Its table, in both dialects.
    fn tables() -> Tables;

    /// Its routes under `base`, without hooks.
    fn router(base: &str) -> Router<Store> {
        Self::router_with(base, Hooks::default())
    }

    /// Its routes under `base`, with `hooks` run before each write.
    fn router_with(base: &str, hooks: Hooks<Self::Create, Self::Replace, Self::Patch>) -> Router<Store> {
        crate::routes::resource::<Self::Create, Self::Replace, Self::Patch>(Self::SPEC, base, hooks)
    }
}

type Mount = Box<dyn FnOnce(&str) -> Router<Store>>;

/// A service assembled in code: resources, hand-written routes, and the service-wide
/// settings a schema's top level would hold.
pub struct App {
    name: &'static str,
    base_path: &'static str,
    mounts: Vec<Mount>,
    specs: Vec<&'static ResourceSpec>,
    tables: Vec<Tables>,
    auth: Option<&'static AuthSpec>,
    rate_limit: Option<RateSpec>,
    cors: Option<CorsSpec>,
    trusted_proxies: &'static [&'static str],
    max_body_bytes: usize,
    request_timeout: Duration,
    max_in_flight: Option<usize>,
}

impl App {
    /// A service named `name` (its environment variables are `<NAME>_...`), with the
    /// schema format's defaults: no base path, open, 1 MiB bodies, 30 s per request.
    pub fn new(name: &'static str) -> App {
        App {
            name,
            base_path: "",
            mounts: Vec::new(),
            specs: Vec::new(),
            tables: Vec::new(),
            auth: None,
            rate_limit: None,
            cors: None,
            trusted_proxies: &[],
            max_body_bytes: 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            max_in_flight: None,
        }
    }

    /// The prefix of every resource route (`/api`).
    pub fn base_path(mut self, base: &'static str) -> App {
        self.base_path = base;
        self
    }

    /// Mounts `R`. Mount a resource after the ones its table refers to.
    pub fn resource<R: Resource>(self) -> App {
        self.resource_with::<R>(Hooks::default())
    }

    /// Mounts `R` with business rules run before its writes.
    pub fn resource_with<R: Resource>(mut self, hooks: Hooks<R::Create, R::Replace, R::Patch>) -> App {
        self.specs.push(R::SPEC);
        self.tables.push(R::tables());
        self.mounts.push(Box::new(move |base| R::router_with(base, hooks)));
        self
    }

    /// Routes written by hand, served beside the resources with the same middleware.
    pub fn routes(mut self, routes: Router<Store>) -> App {
        self.mounts.push(Box::new(move |_| routes));
        self
    }

    /// How callers sign in (the schema's `auth`).
    pub fn auth(mut self, auth: &'static AuthSpec) -> App {
        self.auth = Some(auth);
        self
    }

    /// The service's rate limit (the schema's top-level `rate_limit`).
    pub fn rate_limit(mut self, limit: RateSpec) -> App {
        self.rate_limit = Some(limit);
        self
    }

    /// Which browser origins may call the service.
    pub fn cors(mut self, cors: CorsSpec) -> App {
        self.cors = Some(cors);
        self
    }

    /// Proxies whose `Forwarded` / `X-Forwarded-For` name the client.
    pub fn trusted_proxies(mut self, proxies: &'static [&'static str]) -> App {
        self.trusted_proxies = proxies;
        self
    }

    /// `limits`: the largest body, the longest request, and how many run at once.
    pub fn limits(mut self, max_body_bytes: usize, request_timeout: Duration, max_in_flight: Option<usize>) -> App {
        self.max_body_bytes = max_body_bytes;
        self.request_timeout = request_timeout;
        self.max_in_flight = max_in_flight;
        self
    }

    /// The service, ready for [`crate::serve::main`] or [`crate::serve::app`]. Its
    /// schema is one migration holding every mounted table, in mount order.
    pub fn into_service(self) -> Service {
        let mut routes = Router::new();
        for mount in self.mounts {
            routes = routes.merge(mount(self.base_path));
        }
        let sqlite: String = self.tables.iter().map(|t| t.sqlite).collect();
        let postgres: String =
            self.tables.iter().map(|t| t.postgres).chain(self.tables.iter().map(|t| t.postgres_foreign_keys)).collect();
        // Built once per process, and needed for its whole life.
        let migrations: &'static [MigrationSpec] = Box::leak(Box::new([MigrationSpec {
            version: 1,
            description: "initial schema",
            sqlite: Box::leak(sqlite.into_boxed_str()),
            postgres: Box::leak(postgres.into_boxed_str()),
        }]));
        let sample = self.specs.first().map_or("/healthz".to_owned(), |s| format!("{}{}", self.base_path, s.path));
        Service {
            name: self.name,
            base_path: self.base_path,
            routes,
            migrations,
            max_body_bytes: self.max_body_bytes,
            request_timeout: self.request_timeout,
            sample_path: Box::leak(sample.into_boxed_str()),
            auth: self.auth,
            openapi: None,
            cors: self.cors,
            max_in_flight: self.max_in_flight,
            resources: Box::leak(self.specs.into_boxed_slice()),
            rate_limit: self.rate_limit,
            trusted_proxies: self.trusted_proxies,
        }
    }

    /// Serves the app until SIGINT or SIGTERM, configured from the environment as a
    /// generated service is (`DATABASE_URL`, `BIND`, keys).
    pub fn main(self) -> ExitCode {
        crate::serve::main(self.into_service())
    }
}
