//! One resource, orders, as a careful engineer writes it by hand with axum and sqlx: list
//! (limit and offset), get, create (201 with `Location`), patch, delete (204), unknown
//! fields refused, problem+json errors, SQLite or PostgreSQL by `DATABASE_URL`. The
//! compile bench (`tests/benches/service/compile.rs`) builds it beside the service
//! restgen generates from `orders.yaml` beside it.

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use sqlx::postgres::PgPool;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
use std::str::FromStr;

#[derive(Clone)]
enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Runs `$body` with `$pool` bound to whichever pool the service has.
macro_rules! on {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            Db::Sqlite($pool) => $body,
            Db::Postgres($pool) => $body,
        }
    };
}

const STATUSES: [&str; 3] = ["pending", "paid", "shipped"];
macro_rules! columns {
    () => {
        "\"id\", \"status\", \"total_cents\", \"note\", \"created_at\", \"updated_at\""
    };
}

const LIST: &str = concat!("SELECT ", columns!(), " FROM \"orders\" ORDER BY \"id\" LIMIT $1 OFFSET $2");
const GET: &str = concat!("SELECT ", columns!(), " FROM \"orders\" WHERE \"id\" = $1");
const INSERT: &str = concat!(
    "INSERT INTO \"orders\" (\"status\", \"total_cents\", \"note\", \"created_at\", \"updated_at\") ",
    "VALUES ('pending', $1, $2, $3, $3) RETURNING ",
    columns!()
);
const PATCH: &str = concat!(
    "UPDATE \"orders\" SET \"status\" = COALESCE($2, \"status\"), ",
    "\"note\" = CASE WHEN $3 THEN $4 ELSE \"note\" END, \"updated_at\" = $5 WHERE \"id\" = $1 RETURNING ",
    columns!()
);
const DELETE: &str = "DELETE FROM \"orders\" WHERE \"id\" = $1";

/// A row as sqlx reads it without its derive macros (which would compile sqlx-macros).
type Row = (i64, String, i64, Option<String>, String, String);

#[derive(Serialize)]
struct Order {
    id: i64,
    status: String,
    total_cents: i64,
    note: Option<String>,
    created_at: String,
    updated_at: String,
}

impl From<Row> for Order {
    fn from((id, status, total_cents, note, created_at, updated_at): Row) -> Order {
        Order { id, status, total_cents, note, created_at, updated_at }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateOrder {
    total_cents: i64,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchOrder {
    status: Option<String>,
    note: Option<Option<String>>,
}

#[derive(Deserialize)]
struct Paging {
    limit: Option<i64>,
    offset: Option<i64>,
}

struct Problem(StatusCode, String);

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "type": "about:blank",
            "title": self.0.canonical_reason().unwrap_or("Error"),
            "status": self.0.as_u16(),
            "detail": self.1,
        });
        (self.0, [(header::CONTENT_TYPE, "application/problem+json")], body.to_string()).into_response()
    }
}

impl From<sqlx::Error> for Problem {
    fn from(e: sqlx::Error) -> Problem {
        tracing::error!(error = %e, "database");
        Problem(StatusCode::INTERNAL_SERVER_ERROR, "the server failed to answer".into())
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

fn missing() -> Problem {
    Problem(StatusCode::NOT_FOUND, "no order with this id".into())
}

async fn list(State(db): State<Db>, Query(paging): Query<Paging>) -> Result<Json<Vec<Order>>, Problem> {
    let limit = paging.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(Problem(StatusCode::BAD_REQUEST, "`limit` must be from 1 to 100".into()));
    }
    let offset = paging.offset.unwrap_or(0).max(0);
    let rows: Vec<Row> = on!(&db, pool => sqlx::query_as(LIST).bind(limit).bind(offset).fetch_all(pool).await?);
    Ok(Json(rows.into_iter().map(Order::from).collect()))
}

async fn fetch(State(db): State<Db>, Path(id): Path<i64>) -> Result<Json<Order>, Problem> {
    let row: Option<Row> = on!(&db, pool => sqlx::query_as(GET).bind(id).fetch_optional(pool).await?);
    row.map(|r| Json(r.into())).ok_or_else(missing)
}

async fn create(State(db): State<Db>, Json(input): Json<CreateOrder>) -> Result<Response, Problem> {
    if input.total_cents < 0 {
        return Err(Problem(StatusCode::BAD_REQUEST, "`total_cents` must be at least 0".into()));
    }
    let at = now();
    let row: Row = on!(&db, pool => sqlx::query_as(INSERT).bind(input.total_cents).bind(&input.note).bind(&at).fetch_one(pool).await?);
    let order = Order::from(row);
    let location = format!("/api/orders/{}", order.id);
    Ok((StatusCode::CREATED, [(header::LOCATION, location)], Json(order)).into_response())
}

async fn patch(
    State(db): State<Db>,
    Path(id): Path<i64>,
    Json(input): Json<PatchOrder>,
) -> Result<Json<Order>, Problem> {
    if let Some(status) = &input.status
        && !STATUSES.contains(&status.as_str())
    {
        return Err(Problem(StatusCode::BAD_REQUEST, format!("`status` must be one of {}", STATUSES.join(", "))));
    }
    let (set_note, note) = match input.note {
        Some(note) => (true, note),
        None => (false, None),
    };
    let row: Option<Row> = on!(&db, pool => sqlx::query_as(PATCH).bind(id).bind(&input.status).bind(set_note).bind(&note).bind(now()).fetch_optional(pool).await?);
    row.map(|r| Json(r.into())).ok_or_else(missing)
}

async fn delete(State(db): State<Db>, Path(id): Path<i64>) -> Result<StatusCode, Problem> {
    let gone = on!(&db, pool => sqlx::query(DELETE).bind(id).execute(pool).await?.rows_affected());
    if gone == 0 { Err(missing()) } else { Ok(StatusCode::NO_CONTENT) }
}

/// The table's columns after its id, in either database.
macro_rules! table {
    () => {
        "\"status\" TEXT NOT NULL, \"total_cents\" BIGINT NOT NULL, \"note\" TEXT, \"created_at\" TEXT NOT NULL, \"updated_at\" TEXT NOT NULL)"
    };
}

async fn connect(url: &str) -> Result<Db, sqlx::Error> {
    let db = if url.starts_with("postgres:") {
        Db::Postgres(PgPool::connect(url).await?)
    } else {
        let options = SqliteConnectOptions::from_str(url)?.create_if_missing(true);
        Db::Sqlite(SqlitePool::connect_with(options).await?)
    };
    let table = match db {
        Db::Sqlite(_) => {
            concat!("CREATE TABLE IF NOT EXISTS \"orders\" (\"id\" INTEGER PRIMARY KEY AUTOINCREMENT, ", table!())
        }
        Db::Postgres(_) => concat!("CREATE TABLE IF NOT EXISTS \"orders\" (\"id\" BIGSERIAL PRIMARY KEY, ", table!()),
    };
    on!(&db, pool => sqlx::query(table).execute(pool).await.map(drop)?);
    Ok(db)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).init();
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite://orders.db".into());
    let db = connect(&url).await?;
    let app = Router::new()
        .route("/api/orders", get(list).post(create))
        .route("/api/orders/{id}", get(fetch).patch(patch).delete(delete))
        .with_state(db);
    let listener =
        tokio::net::TcpListener::bind(std::env::var("BIND").unwrap_or_else(|_| "127.0.0.1:8080".into())).await?;
    axum::serve(listener, app).await?;
    Ok(())
}
