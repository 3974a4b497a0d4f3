//! The generated fleet service, served as `restgen::serve::main` serves it but for what the
//! bench sets: the pool's wait, one worker thread, and for a variant its metrics or traces.

use restgen::serve::{Metrics, Settings};
use restgen::store::{Store, StoreOptions};
use std::sync::Arc;

fn main() {
    bench_servers::main(|args, listener| async move {
        // The server's warnings (a 503's cause, a slow pool) to standard error: standard
        // output is the pipe the bench reads the address from, and then no more.
        if std::env::var_os("BENCH_VERBOSE").is_some() {
            use tracing_subscriber::{Layer, filter::Targets, layer::SubscriberExt, util::SubscriberInitExt};
            let filter: Targets = match std::env::var("RUST_LOG") {
                Ok(given) if !given.trim().is_empty() => {
                    given.parse().expect("RUST_LOG: a level and target=level pairs")
                }
                _ => Targets::new().with_default(tracing_subscriber::filter::LevelFilter::WARN),
            };
            let logs =
                tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false).with_filter(filter);
            tracing_subscriber::registry().with(logs).init();
        }
        let kind = args.kind.as_str();
        let service = fleet::service();
        // `generated-traces`, `generated-logs`: logs (and traces) set up as `main` sets them.
        let telemetry = (kind == "generated-traces" || kind == "generated-logs")
            .then(|| restgen::serve::telemetry(service.name).unwrap());
        let options = StoreOptions { pool_timeout: args.pool_timeout, ..StoreOptions::default() };
        let store = Store::connect_with(&args.url, options).await.unwrap();
        restgen::serve::migrate(&store, &service).await.unwrap();
        // `generated-metrics`: its requests counted, as `<SERVICE>_METRICS_BIND` has them.
        let metrics = (kind == "generated-metrics").then(|| Arc::new(Metrics::new()));
        let settings = Settings { metrics, ..Default::default() };
        let app = restgen::serve::app(service, store, &settings).unwrap();
        bench_servers::ready(&listener);
        // No connection info on the request, which neither server reads here.
        axum::serve(listener, axum::ServiceExt::into_make_service(app)).await.unwrap();
        if let Some(telemetry) = telemetry {
            telemetry.finish().await;
        }
    });
}
