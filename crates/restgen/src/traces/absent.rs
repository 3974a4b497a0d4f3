//! Traces where the build leaves out the `traces` feature: nothing is exported, no
//! `traceparent` is read or sent, and a deployment that asks for traces is told at start
//! that this build has none.

use super::Layers;
use axum::http::HeaderMap;
use tracing::Span;

/// Nothing to send at shutdown.
pub(crate) struct Exporting;

impl Exporting {
    pub async fn finish(self) {}
}

/// No layers; a warning where `OTEL_EXPORTER_OTLP_ENDPOINT` asks for traces.
pub(crate) fn layer(_service: &str) -> Result<Option<(Layers, Exporting)>, String> {
    for name in ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"] {
        if std::env::var(name).is_ok_and(|v| !v.trim().is_empty()) {
            eprintln!(
                "warning: {name} is set, but this build of the service exports no traces: build it with the \
                 `traces` feature (docs/deploy.md, \"Traces\")"
            );
            break;
        }
    }
    Ok(None)
}

pub(crate) fn continue_from(_span: &Span, _headers: &HeaderMap) {}

#[cfg(feature = "webhooks")]
pub(crate) fn inject(_span: &Span) -> Vec<(String, String)> {
    Vec::new()
}
