//! One behaviour across services: identity and keys, the security suite, nested-list
//! access, rate limits, idempotency, conditional requests, CORS, the OpenAPI document,
//! the generated client and its retries, a schema's evolution on a populated database.

mod auth;
mod client;
mod conditional;
mod connections;
mod cors;
mod docs;
mod evolution;
mod feed;
mod field_access;
mod formats;
mod hardening;
mod idempotency;
mod instances;
mod keys;
mod lifecycle;
mod limits;
mod logs;
mod metrics;
mod nested;
pub(crate) mod openapi;
mod outages;
mod rate;
mod redirects;
mod refs;
mod request_ids;
mod retries;
mod security;
mod traces;
mod upstream;
mod versions;
mod webhooks;
