//! Services written by hand: structs with `#[derive(Resource)]` mounted on an [`App`],
//! which gathers their routes and tables into the same [`Service`] a generated crate
//! hands the runtime. Everything a resource does at run time is the runtime's shared
//! behaviour, whichever front-end described it.

mod document;

use crate::hooks::{Hooks, Input};
use crate::serve::{CorsSpec, Service};
use crate::spec::{
    ApiKeySpec, AuthSpec, JwtAlgorithm, JwtSpec, PrincipalSpec, RateSpec, ResourceSpec, Scheme, VersioningSpec,
};
use crate::store::{MigrationSpec, Store};
use axum::Router;
use std::process::ExitCode;
use std::time::Duration;

/// A resource the runtime can serve: what `#[derive(Resource)]` implements.
pub trait Resource: 'static {
    /// Snake case, singular: `order`.
    const NAME: &'static str;
    /// The collection path, without base path: `/orders`.
    const PATH: &'static str;
    /// How its records are named.
    const ID_KIND: crate::spec::IdKind;
    /// The resource as the runtime's shared operations see it.
    const SPEC: &'static ResourceSpec;
    /// Its model (restgen-model's `Resource`) as JSON, as its derive checked it: the
    /// service's OpenAPI document is emitted from it at start.
    const MODEL: &'static str;
    /// The allow-listed inputs of create, replace and patch (`()` where the operation is
    /// not offered).
    type Create: Input;
    type Replace: Input;
    type Patch: Input;

    /// Its routes under `base`, without hooks.
    fn router(base: &str) -> Router<Store> {
        Self::router_with(base, Hooks::default())
    }

    /// Its routes under `base`, with `hooks` run before each write.
    fn router_with(base: &str, hooks: Hooks<Self::Create, Self::Replace, Self::Patch>) -> Router<Store> {
        crate::routes::resource::<Self::Create, Self::Replace, Self::Patch>(Self::SPEC, base, hooks)
    }
}

/// The resource that holds the accounts callers sign in as: what
/// `#[resource(principal(identifier = ...))]` implements.
pub trait Principal: Resource {
    /// The field an account is named by at login and in Basic credentials.
    const IDENTIFIER: &'static str;
    /// The password field (an Argon2id hash in storage).
    const PASSWORD: &'static str;
    /// The `roles` field, when accounts have one.
    const ROLES: Option<&'static str>;
}

/// How callers of an [`App`] sign in: the schema's `auth` section, in code. Accounts are
/// records of the principal resource; tokens are signed with `<NAME>_JWT_SECRET` (HS256).
#[derive(Clone, Debug)]
pub struct Accounts {
    principal: &'static ResourceSpec,
    identifier: &'static str,
    password: &'static str,
    roles_field: Option<&'static str>,
    schemes: Vec<Scheme>,
    login_path: &'static str,
    roles: &'static [&'static str],
    default_role: Option<&'static str>,
    admin_roles: &'static [&'static str],
    ttl: Duration,
    issuer: Option<&'static str>,
    audience: Option<&'static str>,
    api_key_header: &'static str,
}

impl Accounts {
    /// Accounts are records of `P`; callers sign in with bearer tokens from
    /// `{base_path}/auth/login`.
    pub fn of<P: Principal>() -> Accounts {
        Accounts {
            principal: P::SPEC,
            identifier: P::IDENTIFIER,
            password: P::PASSWORD,
            roles_field: P::ROLES,
            schemes: vec![Scheme::DEFAULT],
            login_path: restgen_model::model::Login::PATH,
            roles: &[],
            default_role: None,
            admin_roles: &[],
            ttl: restgen_model::model::Jwt::TTL,
            issuer: None,
            audience: None,
            api_key_header: restgen_model::model::ApiKey::HEADER,
        }
    }

    /// The accepted schemes (`Bearer`, `ApiKey`, `Basic`).
    pub fn schemes(mut self, schemes: &[Scheme]) -> Accounts {
        self.schemes = schemes.to_vec();
        self
    }

    /// The roles accounts may hold, and the role of an account that holds none.
    pub fn roles(mut self, roles: &'static [&'static str], default_role: Option<&'static str>) -> Accounts {
        self.roles = roles;
        self.default_role = default_role;
        self
    }

    /// Roles that see and change every record.
    pub fn admin_roles(mut self, roles: &'static [&'static str]) -> Accounts {
        self.admin_roles = roles;
        self
    }

    /// Where tokens are issued, under the base path (default `/auth/login`).
    pub fn login_path(mut self, path: &'static str) -> Accounts {
        self.login_path = path;
        self
    }

    /// How long a token lives, and the `iss` and `aud` it carries and requires.
    pub fn tokens(mut self, ttl: Duration, issuer: Option<&'static str>, audience: Option<&'static str>) -> Accounts {
        self.ttl = ttl;
        self.issuer = issuer;
        self.audience = audience;
        self
    }

    /// The header API keys travel in (default `X-API-Key`).
    pub fn api_key_header(mut self, header: &'static str) -> Accounts {
        self.api_key_header = header;
        self
    }

    /// The runtime's view, for a service named `service` under `base_path`; built once
    /// and kept for the life of the process.
    fn spec(self, service: &'static str, base_path: &str) -> &'static AuthSpec {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let prefix = crate::settings::env_prefix(service);
        Box::leak(Box::new(AuthSpec {
            schemes: Box::leak(self.schemes.into_boxed_slice()),
            principal: Some(PrincipalSpec {
                resource: self.principal,
                login_path: leak(format!("{base_path}{}", self.login_path)),
                identifier: self.identifier,
                password: self.password,
                roles: self.roles_field,
            }),
            jwt: JwtSpec {
                algorithm: JwtAlgorithm::Hs256,
                secret_env: leak(format!("{prefix}_JWT_SECRET")),
                private_key_env: None,
                public_key_env: None,
                ttl_seconds: self.ttl.as_secs(),
                issuer: self.issuer,
                audience: self.audience,
            },
            api_key: ApiKeySpec { header: self.api_key_header, query: None },
            roles: self.roles,
            default_role: self.default_role,
            admin_roles: self.admin_roles,
            env_prefix: leak(prefix),
            realm: service,
        }))
    }
}

type Mount = Box<dyn FnOnce(&str) -> Router<Store>>;

/// A service assembled in code: resources, hand-written routes, and the service-wide
/// settings a schema's top level would hold.
pub struct App {
    name: &'static str,
    title: Option<&'static str>,
    description: Option<&'static str>,
    base_path: &'static str,
    mounts: Vec<Mount>,
    specs: Vec<&'static ResourceSpec>,
    models: Vec<&'static str>,
    auth: Option<Accounts>,
    rate_limit: Option<RateSpec>,
    cors: Option<CorsSpec>,
    trusted_proxies: &'static [&'static str],
    proxy_header: crate::spec::ProxyHeader,
    max_body_bytes: usize,
    request_timeout: Duration,
    max_in_flight: Option<usize>,
    versioning: Option<&'static VersioningSpec>,
    webhooks: Option<crate::spec::WebhooksSpec>,
    docs: bool,
}

impl App {
    /// A service named `name` (its environment variables are `<NAME>_...`), with the
    /// schema format's defaults: no base path, open, 1 MiB bodies, 30 s per request.
    pub fn new(name: &'static str) -> App {
        App {
            name,
            title: None,
            description: None,
            base_path: "",
            mounts: Vec::new(),
            specs: Vec::new(),
            models: Vec::new(),
            auth: None,
            rate_limit: None,
            cors: None,
            trusted_proxies: &[],
            proxy_header: crate::spec::ProxyHeader::DEFAULT,
            max_body_bytes: 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            max_in_flight: None,
            versioning: None,
            webhooks: None,
            // A build that leaves the page out has chosen so.
            docs: cfg!(feature = "docs"),
        }
    }

    /// Whether the reference page is served at `/docs` (the schema's `api.docs`). On by
    /// default where the runtime's `docs` feature is; asked for without it, the service
    /// refuses to start.
    pub fn docs(mut self, serve: bool) -> App {
        self.docs = serve;
        self
    }

    /// The title and description the OpenAPI document gives the service (the schema's
    /// `title` and `description`); the title defaults to its name.
    pub fn describe(mut self, title: &'static str, description: Option<&'static str>) -> App {
        self.title = Some(title);
        self.description = description;
        self
    }

    /// The prefix of every resource route (`/api`).
    pub fn base_path(mut self, base: &'static str) -> App {
        self.base_path = base;
        self
    }

    /// The API versions served side by side and how a request names one (the schema's
    /// `api.versions`, `versioning` and `vendor`); `#[resource(since, until)]` and
    /// `#[field(since, until)]` gate what each version has. Each version's media type must
    /// be `application/vnd.{vendor}.v{n}+json` (checked here, with the versions' order).
    pub fn versions(mut self, versioning: &'static VersioningSpec) -> App {
        let mut previous = 0;
        for v in versioning.versions {
            assert!(v.number > previous, "versions are listed oldest first, each once, from 1");
            let media = restgen_model::model::version_media_type(versioning.vendor, v.number);
            assert_eq!(v.media_type, media, "version {}'s media type", v.number);
            previous = v.number;
        }
        self.versioning = Some(versioning);
        self
    }

    /// Mounts `R`. Mount a resource after the ones its table refers to.
    pub fn resource<R: Resource>(self) -> App {
        self.resource_with::<R>(Hooks::default())
    }

    /// Mounts `R` with business rules run before its writes.
    pub fn resource_with<R: Resource>(mut self, hooks: Hooks<R::Create, R::Replace, R::Patch>) -> App {
        self.specs.push(R::SPEC);
        self.models.push(R::MODEL);
        self.mounts.push(Box::new(move |base| R::router_with(base, hooks)));
        self
    }

    /// Routes written by hand, served beside the resources with the same middleware.
    pub fn routes(mut self, routes: Router<Store>) -> App {
        self.mounts.push(Box::new(move |_| routes));
        self
    }

    /// How callers sign in (the schema's `auth`). Without it the service is open, and a
    /// resource whose access needs callers refuses every request (401).
    pub fn auth(mut self, accounts: Accounts) -> App {
        self.auth = Some(accounts);
        self
    }

    /// The service's rate limit (the schema's top-level `rate_limit`).
    pub fn rate_limit(mut self, limit: RateSpec) -> App {
        self.rate_limit = Some(limit);
        self
    }

    /// Which browser origins may call the service.
    /// How events are delivered (`webhooks`): the secret's variable, attempts, timeout.
    /// Without it, a service whose resources publish `events` delivers with the format's
    /// defaults (`<NAME>_WEBHOOK_SECRET`, 8 attempts, 5 s).
    pub fn webhooks(mut self, webhooks: crate::spec::WebhooksSpec) -> App {
        self.webhooks = Some(webhooks);
        self
    }

    pub fn cors(mut self, cors: CorsSpec) -> App {
        self.cors = Some(cors);
        self
    }

    /// Proxies whose forwarding header ([`App::proxy_header`]) names the client.
    pub fn trusted_proxies(mut self, proxies: &'static [&'static str]) -> App {
        self.trusted_proxies = proxies;
        self
    }

    /// The one forwarding header the trusted proxies write (`X-Forwarded-For` unless
    /// said otherwise); the other is never read.
    pub fn proxy_header(mut self, header: crate::spec::ProxyHeader) -> App {
        self.proxy_header = header;
        self
    }

    /// `limits`: the largest body, the longest request, and how many run at once.
    pub fn limits(mut self, max_body_bytes: usize, request_timeout: Duration, max_in_flight: Option<usize>) -> App {
        self.max_body_bytes = max_body_bytes;
        self.request_timeout = request_timeout;
        self.max_in_flight = max_in_flight;
        self
    }

    /// The service, ready for [`crate::serve::main`] or [`crate::serve::app`]. Its first
    /// migration holds every mounted table, in mount order; when the resources change
    /// later, the runtime plans and applies the migration they need at start.
    pub fn into_service(self) -> Service {
        let settings = document::Settings {
            name: self.name,
            title: self.title,
            description: self.description,
            base_path: self.base_path,
            auth: self.auth.as_ref(),
            rate_limit: self.rate_limit.as_ref(),
            cors: self.cors.as_ref(),
            trusted_proxies: self.trusted_proxies,
            proxy_header: self.proxy_header,
            max_body_bytes: self.max_body_bytes,
            request_timeout: self.request_timeout,
            max_in_flight: self.max_in_flight,
            versioning: self.versioning,
            docs: self.docs,
        };
        // Built once per process, and served for its whole life.
        // Built once per process, and needed for its whole life: the document is rendered
        // from it, and the storage it describes migrates itself at start.
        let model: &'static restgen_model::model::Service =
            Box::leak(Box::new(document::model(&settings, &self.models)));
        let (openapi, versions) = document::render(model);
        let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
        let openapi_3_0 = leak(restgen_openapi::downgrade::to_3_0(&openapi));
        let openapi = leak(openapi);
        let versions_3_0: Vec<(u32, &'static str)> =
            versions.iter().map(|(n, text)| (*n, leak(restgen_openapi::downgrade::to_3_0(text)))).collect();
        let versions: Vec<(u32, &'static str)> = versions.into_iter().map(|(n, text)| (n, leak(text))).collect();
        let mut routes = Router::new();
        for mount in self.mounts {
            routes = routes.merge(mount(self.base_path));
        }
        // The first migration: every table the resources' storage holds, as `restgen
        // generate` would create it; later ones the runtime plans from the same model.
        let storage = restgen_model::evolution::storage::Storage::of(model);
        let create = |d| &*Box::leak(restgen_model::evolution::ddl::create_all(&storage, d).into_boxed_str());
        let migrations: &'static [MigrationSpec] = Box::leak(Box::new([MigrationSpec {
            version: 1,
            description: "initial",
            sqlite: create(restgen_model::evolution::ddl::Dialect::Sqlite),
            postgres: create(restgen_model::evolution::ddl::Dialect::Postgres),
        }]));
        let sample = self
            .specs
            .first()
            .map_or(restgen_model::bounds::LIVENESS_PATH.to_owned(), |s| format!("{}{}", self.base_path, s.path));
        let publishes = self.specs.iter().any(|s| !s.events.is_empty());
        let webhooks = self.webhooks.or_else(|| {
            publishes.then(|| crate::spec::WebhooksSpec {
                secret_env: Box::leak(restgen_model::model::Webhooks::default_secret_env(self.name).into_boxed_str()),
                max_attempts: restgen_model::model::Webhooks::MAX_ATTEMPTS,
                timeout: restgen_model::model::Webhooks::TIMEOUT,
            })
        });
        Service {
            name: self.name,
            base_path: self.base_path,
            routes,
            migrations,
            model: Some(model),
            max_body_bytes: self.max_body_bytes,
            request_timeout: self.request_timeout,
            sample_path: Box::leak(sample.into_boxed_str()),
            auth: self.auth.map(|a| a.spec(self.name, self.base_path)),
            openapi: Some(openapi),
            openapi_versions: Box::leak(versions.into_boxed_slice()),
            openapi_3_0: Some(openapi_3_0),
            openapi_3_0_versions: Box::leak(versions_3_0.into_boxed_slice()),
            docs: self.docs,
            cors: self.cors,
            max_in_flight: self.max_in_flight,
            resources: Box::leak(self.specs.into_boxed_slice()),
            rate_limit: self.rate_limit,
            trusted_proxies: self.trusted_proxies,
            proxy_header: self.proxy_header,
            versioning: self.versioning,
            webhooks,
        }
    }

    /// Serves the app until SIGINT or SIGTERM, configured from the environment as a
    /// generated service is (`DATABASE_URL`, `BIND`, keys).
    pub fn main(self) -> ExitCode {
        crate::serve::main(self.into_service())
    }
}
