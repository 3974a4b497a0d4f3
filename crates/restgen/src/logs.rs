//! What a service logs, and where: standard output, as text or one JSON object a line,
//! filtered by `RUST_LOG`; and with the `traces` feature, the spans exported over OTLP.

/// What [`run`](crate::serve::run) sets up before it serves, for a service that serves
/// by its own means ([`app`](crate::serve::app)): logs to standard output, filtered by
/// `RUST_LOG`, as text, coloured only on a terminal (a log collected from a pipe or a file
/// holds no escape codes), or with `LOG_FORMAT=json` one JSON object a line, for collectors
/// that parse them; and where the `traces` feature is on and OpenTelemetry's variables ask
/// for them, traces exported over OTLP, the service named `service` unless
/// `OTEL_SERVICE_NAME` says otherwise. A variable set to something this build cannot do is
/// an error naming it. Only the first call in a process sets them up.
pub fn telemetry(service: &str) -> Result<Telemetry, String> {
    use std::io::IsTerminal;
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::{FilterExt, LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = log_filter(std::env::var("RUST_LOG"))?;
    // The spans made for traces are never log lines' (whatever `RUST_LOG` says).
    let filter = filter
        .and(Targets::new().with_default(LevelFilter::TRACE).with_target(crate::traces::TARGET, LevelFilter::OFF));
    let fmt = tracing_subscriber::fmt::layer();
    let logs: crate::traces::Layers = match std::env::var("LOG_FORMAT").as_deref() {
        Err(_) | Ok("" | "text") => {
            let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            Box::new(fmt.with_ansi(colour).with_filter(filter))
        }
        Ok("json") => Box::new(fmt.json().with_ansi(false).with_filter(filter)),
        Ok(other) => return Err(format!("LOG_FORMAT must be `text` or `json`, not `{other}`")),
    };
    let (traces, exporting) = crate::traces::layer(service)?.unzip();
    let layers: crate::traces::Layers = match traces {
        Some(traces) => Box::new(logs.and_then(traces)),
        None => logs,
    };
    // A second service in one process (tests) keeps the first one's logging.
    match tracing_subscriber::registry().with(layers).try_init() {
        Ok(()) => Ok(Telemetry { exporting }),
        Err(_) => Ok(Telemetry { exporting: None }),
    }
}

/// What `RUST_LOG` asks to log: a level (`debug`), `target=level` pairs, or both,
/// comma-separated, a target naming a module path and everything under it; unset or
/// empty, `info` with sqlx's statements at `warn`. Refused with the variable's name when
/// it does not parse, rather than logging what nobody asked for: span and field filters
/// (tracing-subscriber's `EnvFilter`) are not taken, as their regular expressions would
/// compile a second regex engine into every service.
fn log_filter(value: Result<String, std::env::VarError>) -> Result<tracing_subscriber::filter::Targets, String> {
    const DEFAULT: &str = "info,sqlx=warn";
    let value = match value {
        Ok(value) => value,
        Err(std::env::VarError::NotPresent) => String::new(),
        Err(std::env::VarError::NotUnicode(_)) => return Err("RUST_LOG is not UTF-8".into()),
    };
    let directives: Vec<&str> = value.split(',').map(str::trim).filter(|d| !d.is_empty()).collect();
    let directives = if directives.is_empty() { DEFAULT.to_owned() } else { directives.join(",") };
    directives.parse().map_err(|e| {
        format!("RUST_LOG must be a level or `target=level` pairs, comma-separated (`{DEFAULT}`), not `{value}`: {e}")
    })
}

/// Logs and traces as [`telemetry`] set them up: [`Telemetry::finish`] once the service has
/// stopped sends the spans not sent yet.
#[must_use = "finish it once the service has stopped, or the last spans are lost"]
pub struct Telemetry {
    exporting: Option<crate::traces::Exporting>,
}

impl Telemetry {
    /// Sends the spans not sent yet (within the exporter's timeout), and stops exporting.
    pub async fn finish(self) {
        if let Some(exporting) = self.exporting {
            exporting.finish().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::env::VarError;
    use tracing::Level;

    #[test]
    fn rust_log_takes_levels_and_targets_and_refuses_the_rest_by_name() {
        let filter = |v: &str| super::log_filter(Ok(v.to_owned()));
        for unset in [Err(VarError::NotPresent), Ok(String::new()), Ok(" , ".to_owned())] {
            let f = super::log_filter(unset).unwrap();
            assert!(f.would_enable("shop::orders", &Level::INFO) && !f.would_enable("shop::orders", &Level::DEBUG));
            assert!(f.would_enable("sqlx::query", &Level::WARN) && !f.would_enable("sqlx::query", &Level::INFO));
        }
        // Spaces after the commas, as people write lists; a target covers its modules.
        let f = filter("warn, tower_http=debug").unwrap();
        assert!(f.would_enable("tower_http::trace::on_request", &Level::DEBUG));
        assert!(!f.would_enable("restgen::serve", &Level::INFO) && f.would_enable("restgen::serve", &Level::WARN));
        for bad in ["sqlx=loud", "a=b=c", "[request{request_id=1}]=debug"] {
            let e = filter(bad).unwrap_err();
            assert!(e.starts_with("RUST_LOG must be") && e.contains(&format!("not `{bad}`")), "{e}");
        }
    }
}
