//! Serving a generated service: configuration from the environment, the middleware every
//! route shares, `/healthz` and `/readyz`, and graceful shutdown.

use crate::auth::{Authenticator, Secrets};
use crate::clock::Clock;
pub use crate::connections::{Application, HttpLimits};
pub use crate::cors::CorsSpec;
use crate::idempotency::IdempotencySettings;
pub use crate::logs::{Telemetry, telemetry};
pub use crate::metrics::Metrics;
use crate::observe::Observed;
use crate::problem::Problem;
use crate::rate::{Limiter, Limits, RateSettings};
use crate::spec::{AuthSpec, RateSpec, ResourceSpec, VersioningSpec, WebhooksSpec};
use crate::store::{MigrationSpec, Store, StoreOptions};
use crate::webhooks::WebhookSettings;
use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tower_http::trace::TraceLayer;

/// What generated code hands the runtime to serve.
pub struct Service {
    pub name: &'static str,
    /// `""` or `/api`; `routes` already start with it.
    pub base_path: &'static str,
    pub routes: Router<Store>,
    pub migrations: &'static [MigrationSpec],
    /// A derived service's model: its storage migrates itself at start, planned against
    /// the record the database keeps (`migrations` then holds its first migration alone).
    /// `None` for a generated service, whose migrations are its files.
    pub model: Option<&'static restgen_model::model::Service>,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    /// A sample request for the start-up banner (`/api/users`).
    pub sample_path: &'static str,
    /// The `auth` section; `None` for an open service.
    pub auth: Option<&'static AuthSpec>,
    /// The OpenAPI 3.1 document, served at `/openapi.json` (a generated service has one):
    /// with versions, the newest's.
    pub openapi: Option<&'static str>,
    /// With versions, each one's document, served at `/openapi.v{n}.json`.
    pub openapi_versions: &'static [(u32, &'static str)],
    /// The same documents in OpenAPI 3.0.3, for the tools that read no other: the newest's
    /// at `/openapi.3.0.json`, each version's at `/openapi.v{n}.3.0.json`.
    pub openapi_3_0: Option<&'static str>,
    pub openapi_3_0_versions: &'static [(u32, &'static str)],
    /// `api.docs`: the reference page at `/docs` (and `/docs/v{n}`) over those documents.
    pub docs: bool,
    /// The `cors` section; `None`: browsers on other origins are not let in.
    pub cors: Option<CorsSpec>,
    /// `limits.max_in_flight`: requests served at once; beyond it, 503 with `Retry-After`.
    pub max_in_flight: Option<usize>,
    /// Every resource, for the runtime's view of the routes (which limit each has).
    pub resources: &'static [&'static ResourceSpec],
    /// The service's `rate_limit`: routes of no resource, and every resource without
    /// a limit of its own.
    pub rate_limit: Option<RateSpec>,
    /// `trusted_proxies`: peers whose forwarding header names the client.
    pub trusted_proxies: &'static [&'static str],
    /// `proxy_header`: the one forwarding header those peers write.
    pub proxy_header: crate::spec::ProxyHeader,
    /// `api.versions` and `api.versioning`; `None` for a service without versions.
    pub versioning: Option<&'static VersioningSpec>,
    /// Where resources publish `events`: subscriptions and deliveries.
    pub webhooks: Option<WebhooksSpec>,
}

impl Service {
    /// Whether `/docs` is served: asked for, and there is a document to show.
    fn serves_docs(&self) -> bool {
        self.docs && self.openapi.is_some()
    }
}

/// What a deployment decides beside the schema: key material, how rate limits run, and
/// the clock budgets and stored answers are measured by.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub secrets: Secrets,
    pub rate: RateSettings,
    pub clock: Clock,
    pub webhooks: WebhookSettings,
    pub feed: crate::feed::FeedSettings,
    /// Where the requests are counted, when they are ([`Metrics`]; `<SERVICE>_METRICS_BIND`
    /// sets it for a service run by [`main`]).
    pub metrics: Option<Arc<Metrics>>,
}

/// Settings read from the environment.
#[derive(Clone)]
pub struct Config {
    /// `DATABASE_URL`; default: a SQLite file named after the service in the working
    /// directory, when the build keeps SQLite.
    pub database_url: String,
    /// `BIND`; default `127.0.0.1:8080`.
    pub bind: String,
    /// `DATABASE_MAX_CONNECTIONS`, `DATABASE_MIN_CONNECTIONS`, `DATABASE_POOL_TIMEOUT`,
    /// `DATABASE_IDLE_TIMEOUT`, `DATABASE_MAX_LIFETIME`, `SQLITE_SYNCHRONOUS`.
    pub store: StoreOptions,
    /// `HTTP_HEADER_TIMEOUT`, `HTTP_BODY_TIMEOUT`, `HTTP_KEEP_ALIVE_TIMEOUT`,
    /// `HTTP_MAX_CONNECTIONS`.
    pub http: HttpLimits,
}

/// The database URL's password stays out of logs.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("database_url", &restgen_wire::redact::url(&self.database_url))
            .field("bind", &self.bind)
            .field("store", &self.store)
            .field("http", &self.http)
            .finish()
    }
}

impl Config {
    /// The configuration from the environment; a variable set to something unusable is
    /// an error naming it.
    pub fn from_env(service: &str) -> Result<Config, String> {
        Ok(Config {
            database_url: match std::env::var("DATABASE_URL") {
                Ok(url) => url,
                Err(_) if cfg!(feature = "sqlite") => format!("sqlite://{service}.db"),
                Err(_) => {
                    return Err("DATABASE_URL is unset, and this build of the service keeps PostgreSQL alone: set it \
                                to a postgres:// URL"
                        .into());
                }
            },
            bind: std::env::var("BIND").unwrap_or_else(|_| "127.0.0.1:8080".into()),
            store: StoreOptions::from_lookup(|name| std::env::var(name).ok())?,
            http: HttpLimits::from_lookup(|name| std::env::var(name).ok())?,
        })
    }
}

/// `main` of a generated service: runs it on a multi-threaded runtime until SIGINT or
/// SIGTERM.
pub fn main(service: Service) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(run(service)),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the service until SIGINT or SIGTERM, then finishes in-flight requests.
pub async fn run(service: Service) -> ExitCode {
    let telemetry = match telemetry(service.name) {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = match Config::from_env(service.name) {
        Ok(config) => serve(service, config).await,
        Err(e) => Err(e),
    };
    telemetry.finish().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Brings the database to what `service` needs: its migration files applied, or for a
/// derived service, the migration its model needs planned and applied.
pub async fn migrate(store: &Store, service: &Service) -> Result<(), crate::store::MigrateError> {
    match service.model {
        Some(model) => store.evolve(service.migrations, model).await,
        None => store.migrate(service.migrations).await,
    }
}

async fn serve(service: Service, config: Config) -> Result<(), String> {
    let store = Store::connect_with(&config.database_url, config.store)
        .await
        .map_err(|e| format!("cannot open the database: {e}"))?;
    migrate(&store, &service).await.map_err(|e| format!("migrations failed: {e}"))?;
    crate::traces::database(match store.dialect() {
        crate::store::Dialect::Sqlite => "sqlite",
        crate::store::Dialect::Postgres => "postgresql",
    });
    if let Some(file) = config.database_url.strip_prefix("sqlite://") {
        let file = file.split('?').next().unwrap_or(file);
        let shown = std::fs::canonicalize(file).map_or_else(|_| file.to_owned(), |p| p.display().to_string());
        println!("database: SQLite file {shown}");
    } else {
        println!("database: PostgreSQL");
    }
    let listener = tokio::net::TcpListener::bind(&config.bind)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.bind))?;
    let secrets = match service.auth {
        Some(spec) => {
            bootstrap_from_env(&store, spec).await?;
            Secrets::from_env(spec)?
        }
        None => Secrets::default(),
    };
    let mut secrets = secrets;
    if let Some(spec) = &service.webhooks {
        secrets.webhook_keys = crate::webhooks::keys_from_lookup(spec, |name| std::env::var(name).ok())?;
    }
    let rate = RateSettings::from_lookup(service.name, |name| std::env::var(name).ok())?;
    let webhooks = WebhookSettings::from_lookup(service.name, |name| std::env::var(name).ok())?;
    let feed = crate::feed::FeedSettings::from_lookup(service.name, |name| std::env::var(name).ok())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let (name, sample) = (service.name, service.sample_path);
    let docs = service.serves_docs();
    let metrics = metrics_listener(name).await?;
    let publishes = service.webhooks.is_some();
    let counted = metrics.as_ref().map(|(_, metrics)| metrics.clone());
    let settings = Settings { secrets, rate, clock: Clock::System, webhooks, feed, metrics: counted };
    let (app, background) = build(service, store.clone(), &settings, Worker::Returned)?;
    println!("{name} listening on http://{addr}");
    // Dropped once the service has stopped, which stops the metrics listener too.
    let mut stop_metrics = None;
    if let Some((listener, metrics)) = metrics {
        let at = listener.local_addr().map_err(|e| e.to_string())?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        stop_metrics = Some(stop);
        let signal = async move {
            let _ = stopped.await;
        };
        let on = (store.clone(), Clock::System);
        let served = crate::observe::serve_metrics(listener, metrics, on, publishes, signal);
        crate::outlined::spawn(async move {
            if let Err(e) = served.await {
                tracing::error!(error = %e, "the metrics listener stopped");
            }
        });
        println!("metrics: http://{at}{}", restgen_model::bounds::METRICS_PATH);
    }
    println!("try: curl -i http://{addr}{sample}");
    if docs {
        println!("read and try the API: http://{addr}{}", restgen_model::bounds::DOCS_PATH);
    }
    serve_with(listener, app, config.http, shutdown()).await.map_err(|e| e.to_string())?;
    drop(stop_metrics);
    // Deliveries in flight finish (each within its timeout); claimed ones not yet
    // attempted are released to the other instances.
    if let Some(background) = background {
        background.shutdown().await;
    }
    store.close().await;
    Ok(())
}

/// `<SERVICE>_METRICS_BIND`'s listener, bound, and the metrics it serves; `None` when the
/// variable is unset (no metrics are counted then).
async fn metrics_listener(service: &str) -> Result<Option<(tokio::net::TcpListener, Arc<Metrics>)>, String> {
    let var = format!("{}_METRICS_BIND", crate::settings::env_prefix(service));
    let Ok(bind) = std::env::var(&var) else { return Ok(None) };
    let listener =
        tokio::net::TcpListener::bind(&bind).await.map_err(|e| format!("{var}: cannot listen on {bind}: {e}"))?;
    Ok(Some((listener, Arc::new(Metrics::new()))))
}

/// Serves `app` until `signal` completes, then stops accepting connections and finishes
/// the requests in flight before returning, with the default [`HttpLimits`]. Each request
/// knows the address it came from (rate limits keyed by address need it).
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    app: impl Application,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, app, HttpLimits::default(), signal).await
}

/// [`serve_until`] with these connection limits: how long a client may take over a
/// request's head, its body and between requests, and how many connections are open at
/// once ([`HttpLimits`], from `HTTP_*` in the environment by [`Config::from_env`]).
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    app: impl Application,
    limits: HttpLimits,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    crate::connections::serve(listener, app, limits, signal).await
}

/// `<SERVICE>_ADMIN`, when set: the first admin's account fields as JSON.
async fn bootstrap_from_env(store: &Store, spec: &'static AuthSpec) -> Result<(), String> {
    let var = format!("{}_ADMIN", spec.env_prefix);
    if let Ok(json) = std::env::var(&var) {
        let done = crate::auth::bootstrap_admin(store, spec, &json).await.map_err(|e| format!("{var}: {e}"))?;
        tracing::info!("{var}: {done}");
    }
    Ok(())
}

/// The subscription routes and this instance's worker, for a service whose resources
/// publish events.
#[cfg(feature = "webhooks")]
fn webhooks(
    service: &Service,
    store: &Store,
    settings: &Settings,
) -> Result<(Router<Store>, Option<crate::webhooks::Background>), String> {
    // Before the routes too: a hook of the service's may build an HTTP client.
    crate::webhooks::install_tls_provider();
    let Some(spec) = service.webhooks else { return Ok((Router::new(), None)) };
    let keys = match settings.secrets.webhook_keys.as_slice() {
        [] => crate::webhooks::keys_from_lookup(&spec, |_| None)?,
        keys => keys.to_vec(),
    };
    let mut webhooks = crate::webhooks::Webhooks::new(
        spec,
        service.resources,
        service.auth,
        keys,
        settings.webhooks.clone(),
        settings.clock.clone(),
    );
    webhooks.metrics = settings.metrics.clone();
    let webhooks = Arc::new(webhooks);
    let routes = crate::webhooks::routes(webhooks.clone(), service.base_path);
    let background = match settings.webhooks.worker {
        true => Some(crate::webhooks::start(webhooks, store.clone())?),
        false => None,
    };
    Ok((routes, background))
}

/// A build without webhooks serves no service that publishes events (generated code
/// and derives stop its build first, with `require!`).
#[cfg(not(feature = "webhooks"))]
fn webhooks(
    service: &Service,
    _: &Store,
    _: &Settings,
) -> Result<(Router<Store>, Option<crate::webhooks::Background>), String> {
    match service.webhooks {
        None => Ok((Router::new(), None)),
        Some(_) => Err(format!(
            "{}: resources publish `events`, and this build of restgen leaves out its `webhooks` feature",
            service.name
        )),
    }
}

/// Whether this build can check the `pattern`s of `resources`' fields: always where it
/// `kept` the `patterns` feature; without it, only where no field has one (generated code
/// stops its build first, with `require!`).
fn patterns_kept(name: &str, resources: &[&ResourceSpec], kept: bool) -> Result<(), String> {
    let patterned = resources.iter().find_map(|r| r.fields.iter().find(|f| f.pattern.is_some()).map(|f| (r, f)));
    match patterned {
        Some((r, f)) if !kept => Err(format!(
            "{name}: {}.{} has a `pattern`, and this build of restgen leaves out its `patterns` feature",
            r.name, f.name
        )),
        _ => Ok(()),
    }
}

/// The reference page over the service's documents.
#[cfg(feature = "docs")]
fn docs(name: &str, documents: &[(u32, &str)]) -> Result<Router<Store>, String> {
    let versions: Vec<u32> = documents.iter().map(|(n, _)| *n).collect();
    Ok(crate::docs::routes(name, &versions))
}

/// A build without the page serves no service that asks for it (generated code stops its
/// build first, with `require!`).
#[cfg(not(feature = "docs"))]
fn docs(name: &str, _: &[(u32, &str)]) -> Result<Router<Store>, String> {
    Err(format!("{name}: `api.docs` serves a reference page, and this build of restgen leaves out its `docs` feature"))
}

/// The whole application: resource routes under the base path, the auth endpoints,
/// `/healthz` and `/readyz`, and the middleware every route shares. Fails when the key material in
/// `settings` is unusable.
pub fn app(service: Service, store: Store, settings: &Settings) -> Result<impl Application, String> {
    // The worker lives as long as the application: it stops when the last clone is dropped.
    let (app, _) = build(service, store, settings, Worker::Held)?;
    Ok(app)
}

/// Who holds the webhook worker [`build`] starts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Worker {
    /// The caller, to stop it once the requests in flight are answered.
    Returned,
    /// The application, which stops it when its last clone is dropped.
    Held,
}

/// The service and, where it publishes events and this instance delivers, its webhook
/// worker, already running.
fn build(
    service: Service,
    store: Store,
    settings: &Settings,
    worker: Worker,
) -> Result<(impl Application, Option<crate::webhooks::Background>), String> {
    // A pattern this build cannot check refuses the service before anything starts.
    patterns_kept(service.name, service.resources, cfg!(feature = "patterns"))?;
    // Records and events are stamped by the service's clock, as budgets are measured by it.
    let store = store.with_clock(settings.clock.clone());
    let (mut routes, mut background) = webhooks(&service, &store, settings)?;
    // This instance's feed poller, where a resource has a feed: it lives as long as the
    // application does.
    let proxies = crate::rate::address::Proxies::parse(service.trusted_proxies, service.proxy_header)?;
    let feed = match service.resources.iter().any(|r| r.feed) {
        true => Some(crate::feed::start(&store, settings.feed.clone(), proxies.clone())),
        false => None,
    };
    let ids = Arc::new(crate::observe::Ids::new(proxies));
    let serves_docs = service.serves_docs();
    routes = routes.merge(service.routes);
    let newest = [(None, service.openapi, false), (None, service.openapi_3_0, true)];
    let versions = service.openapi_versions.iter().map(|(n, d)| (Some(*n), Some(*d), false));
    let versions_3_0 = service.openapi_3_0_versions.iter().map(|(n, d)| (Some(*n), Some(*d), true));
    for (version, document, openapi_3_0) in newest.into_iter().chain(versions).chain(versions_3_0) {
        let Some(document) = document else { continue };
        routes = routes.route(
            &restgen_model::bounds::document_path(version, openapi_3_0),
            axum::routing::get(
                move || async move { ([(header::CONTENT_TYPE, restgen_wire::http::media::JSON)], document) },
            ),
        );
    }
    if serves_docs {
        routes = routes.merge(docs(service.name, service.openapi_versions)?);
    }
    let auth = match service.auth {
        Some(spec) => {
            let auth = Arc::new(Authenticator::new(spec, store.clone(), &settings.secrets, settings.clock.clone())?);
            routes = routes.merge(crate::auth::routes(auth.clone(), service.base_path));
            Some(auth)
        }
        None => None,
    };
    let limits = Limits {
        default: service.rate_limit,
        resources: service.resources,
        base_path: service.base_path,
        trusted_proxies: service.trusted_proxies,
        proxy_header: service.proxy_header,
    };
    let limiter = Limiter::new(limits, &store, settings.rate.clone(), settings.clock.clone())?.map(Arc::new);
    // Unknown paths count against the limit too, and are answered as the caller is known.
    let idempotency_settings = IdempotencySettings {
        clock: settings.clock.clone(),
        abandoned_after: service.request_timeout + Duration::from_secs(1),
    };
    let rate = limiter.clone().map(|limiter| {
        axum::middleware::from_fn(move |request, next| crate::rate::enforce(limiter.clone(), request, next))
    });
    let authenticate = auth.map(|auth| {
        let limiter = limiter.clone();
        axum::middleware::from_fn(move |request, next| {
            crate::auth::authenticate(auth.clone(), limiter.clone(), request, next)
        })
    });
    let routes = routes.fallback(|| async { Problem::not_found("no such route") });
    let limit = service.max_body_bytes;
    // Rate limits need the route a request was routed to, so they and what must be inside
    // them wrap each route (`Router::layer`: a boxed service per route and layer, cloned
    // for each request), the body limit innermost: a body too large is a request like any
    // other, counted and answered with the budget's fields. Without them the router service bounds
    // bodies itself.
    let per_route = (authenticate.is_some() || rate.is_some()).then(|| {
        tower::ServiceBuilder::new()
            .option_layer(authenticate)
            // Inside authentication, so that budgets can be the caller's own.
            .option_layer(rate)
            .layer(crate::body::limit::LimitLayer { limit })
    });
    let bound_bodies = per_route.is_none();
    let routes = match per_route {
        Some(layers) => routes.layer(layers),
        None => routes,
    };
    let cors = service.cors.map(|c| crate::cors::layer(c, service.auth));
    // Shed, not queue: a request beyond the limit is answered at once, and the caller
    // told when to come back.
    let shed = service.max_in_flight.map(|n| {
        tower::ServiceBuilder::new()
            .layer(axum::error_handling::HandleErrorLayer::new(|_: tower::BoxError| async { overloaded() }))
            .layer(tower::load_shed::LoadShedLayer::new())
            // Global: axum applies layers route by route, and the limit is for the service.
            .layer(tower::limit::GlobalConcurrencyLimitLayer::new(n))
    });
    // Before routing, so that `{base}/v{n}/...` is routed as the unprefixed path; the
    // version's refusals (404, 400, 406, 410) are problems like every other answer.
    let version = service.versioning.map(|spec| {
        let mut roots: Vec<&'static str> = service.resources.iter().map(|r| r.path).collect();
        roots.extend(service.resources.iter().flat_map(|r| r.former_paths.iter().copied()));
        let versions =
            Arc::new(crate::version::Versions { spec, base: service.base_path, roots, clock: settings.clock.clone() });
        axum::middleware::from_fn(move |request, next| crate::version::resolve(versions.clone(), request, next))
    });
    // A span and a line per request where `RUST_LOG` asks for them (`tower_http=debug`);
    // otherwise the layer would only cost each request its span and a wrapped body (the
    // failures it would log at other levels are logged where they happen).
    let trace = tracing::enabled!(target: "tower_http::trace::on_response", tracing::Level::DEBUG).then(|| {
        let query_key = service.auth.filter(|a| a.has(crate::spec::Scheme::ApiKey)).and_then(|a| a.api_key.query);
        let layer = TraceLayer::new_for_http().make_span_with(RequestSpan { query_key });
        tower::ServiceBuilder::new().map_response(IntoResponse::into_response).layer(layer)
    });
    // Without any of these the router service is all there is between hyper and the routes: each
    // layer, even one left out (`option_layer`'s `Either`), is a call and a poll more for
    // every request.
    let outermost = trace.is_none() && cors.is_none() && version.is_none() && shed.is_none();
    let held = if worker == Worker::Held { background.take() } else { None };
    let (deadlines, ticker) = crate::deadlines::Deadlines::start(service.request_timeout);
    let framing = crate::router_service::SharedState {
        idempotency_settings,
        store: store.clone(),
        readiness: crate::router_service::Readiness::default(),
        deadlines,
        max_body_bytes: limit,
        linger: outermost,
        bound_bodies,
        _ticker: ticker,
        _background: held,
        _feed: feed,
    };
    let framed = crate::router_service::RouterService { inner: routes.with_state(store), shared: Arc::new(framing) };
    if outermost {
        return Ok((
            Observed { inner: tower::util::Either::Left(framed), ids, metrics: settings.metrics.clone() },
            background,
        ));
    }
    let outer = tower::ServiceBuilder::new()
        .option_layer(trace)
        // A body declared larger than the limit is refused as it is, then read and thrown
        // away (bounded) so that a client still sending it gets the 413.
        .layer(crate::linger::LingerLayer { limit })
        // Outermost but for the two above: a preflight is answered before routing or auth,
        // and every answer, errors included, carries the CORS headers a browser needs to
        // read it.
        .option_layer(cors)
        .map_response(IntoResponse::into_response)
        .option_layer(version)
        .option_layer(shed)
        .service(framed);
    Ok((Observed { inner: tower::util::Either::Right(outer), ids, metrics: settings.metrics.clone() }, background))
}

/// The span of one request, as tower-http's default names it (`request`, with its method,
/// URI and version), but with an API key sent in the query string (`api_key.query`) shown
/// as `***`: the span is made before authentication takes the key out of the request.
#[derive(Clone, Copy)]
struct RequestSpan {
    query_key: Option<&'static str>,
}

impl<B> tower_http::trace::MakeSpan<B> for RequestSpan {
    fn make_span(&mut self, request: &axum::http::Request<B>) -> tracing::Span {
        let uri = shown_uri(request.uri(), self.query_key);
        // tower-http's own target, so that `RUST_LOG=tower_http=debug` shows it as it did.
        tracing::debug_span!(
            target: "tower_http::trace::make_span",
            "request",
            method = %request.method(),
            uri = %uri,
            version = ?request.version()
        )
    }
}

/// `uri` with the value of the query parameter `key` replaced by `***`.
fn shown_uri(uri: &axum::http::Uri, key: Option<&str>) -> String {
    let (Some(key), Some(query)) = (key, uri.query()) else { return uri.to_string() };
    if !form_urlencoded::parse(query.as_bytes()).any(|(k, _)| k == key) {
        return uri.to_string();
    }
    let pairs = form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| if k == key { (k, restgen_wire::redact::REDACTED.into()) } else { (k, v) });
    let query = form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    format!("{}?{query}", uri.path())
}

/// 503 for a request beyond `max_in_flight`.
fn overloaded() -> Response {
    Problem::unavailable("the service is at its limit of requests in flight; retry shortly").into_response()
}

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_build_without_patterns_refuses_a_resource_with_one_at_start() {
        use crate::spec::{FieldSpec, ResourceSpec};
        static PLAIN: [FieldSpec; 1] = [FieldSpec { name: "title", ..FieldSpec::DEFAULT }];
        static PATTERNED: [FieldSpec; 2] = [
            FieldSpec { name: "title", ..FieldSpec::DEFAULT },
            FieldSpec { name: "sku", pattern: Some("[A-Z]{3}"), ..FieldSpec::DEFAULT },
        ];
        static BOOK: ResourceSpec =
            ResourceSpec { name: "book", path: "/books", fields: &PLAIN, ..ResourceSpec::DEFAULT };
        static ITEM: ResourceSpec =
            ResourceSpec { name: "item", path: "/items", fields: &PATTERNED, ..ResourceSpec::DEFAULT };
        assert_eq!(super::patterns_kept("shop", &[&BOOK], false), Ok(()));
        assert_eq!(super::patterns_kept("shop", &[&BOOK, &ITEM], true), Ok(()));
        let refused = super::patterns_kept("shop", &[&BOOK, &ITEM], false).unwrap_err();
        assert_eq!(
            refused,
            "shop: item.sku has a `pattern`, and this build of restgen leaves out its `patterns` feature"
        );
    }

    #[test]
    fn a_query_api_key_is_shown_as_stars_and_the_rest_as_sent() {
        let uri: axum::http::Uri = "/api/books?page=2&library_key=rk_abc_SECRET&q=a%20b".parse().unwrap();
        let shown = super::shown_uri(&uri, Some("library_key"));
        assert_eq!(shown, "/api/books?page=2&library_key=***&q=a+b");
        assert_eq!(super::shown_uri(&uri, None), uri.to_string());
        let plain: axum::http::Uri = "/api/books?page=2".parse().unwrap();
        assert_eq!(super::shown_uri(&plain, Some("library_key")), "/api/books?page=2");
    }

    #[test]
    fn a_config_shown_hides_the_database_password() {
        let config = super::Config {
            database_url: "postgres://app:s3cret-pass@db:5432/shop".into(),
            bind: "127.0.0.1:8080".into(),
            store: crate::store::StoreOptions::default(),
            http: super::HttpLimits::default(),
        };
        let shown = format!("{config:?}");
        assert!(shown.contains("postgres://app:***@db:5432/shop") && !shown.contains("s3cret-pass"), "{shown}");
    }
}
