//! The hand-written reference: what a careful engineer writes with axum and sqlx for the
//! routes the bench asks (docs/performance.md).

use axum::{
    Router,
    extract::{Path, Query, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use std::str::FromStr;
use std::time::Duration;

fn main() {
    bench_servers::main(|args, listener| async move {
        let app = hand_written(&args.url, args.pool_timeout).await;
        bench_servers::ready(&listener);
        axum::serve(listener, app).await.unwrap();
    });
}

/// The reference's pools: 2 connections per core on SQLite (WAL, `synchronous=NORMAL`,
/// foreign keys on, 5 s busy timeout), 4 per core on PostgreSQL; no ping before each use.
#[derive(Clone)]
enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

macro_rules! on {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            Db::Sqlite($pool) => $body,
            Db::Postgres($pool) => $body,
        }
    };
}

async fn hand_written(url: &str, pool_timeout: Duration) -> Router {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get() as u32);
    let db = if url.starts_with("sqlite:") {
        let options = SqliteConnectOptions::from_str(url)
            .unwrap()
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(2 * cores)
            .test_before_acquire(false)
            .acquire_timeout(pool_timeout);
        Db::Sqlite(pool.connect_with(options).await.unwrap())
    } else {
        let pool =
            PgPoolOptions::new().max_connections(4 * cores).test_before_acquire(false).acquire_timeout(pool_timeout);
        Db::Postgres(pool.connect(url).await.unwrap())
    };
    Router::new()
        .route("/v0/trips", get(trips))
        .route("/v0/trips/{id}", get(trip))
        .route("/v0/depots", get(depots).post(create_depot))
        .route("/v0/depots/{id}", axum::routing::patch(patch_depot))
        .with_state(db)
}

#[derive(Serialize)]
struct Trip {
    id: i64,
    vehicle_id: i64,
    driver_id: i64,
    status: String,
    distance_km: String,
    starts_at: String,
    note: Option<String>,
    created_at: String,
    updated_at: String,
}

type TripRow = (i64, i64, i64, String, String, String, Option<String>, String, String);

impl From<TripRow> for Trip {
    fn from(r: TripRow) -> Trip {
        Trip {
            id: r.0,
            vehicle_id: r.1,
            driver_id: r.2,
            status: r.3,
            distance_km: r.4,
            starts_at: r.5,
            note: r.6,
            created_at: r.7,
            updated_at: r.8,
        }
    }
}

#[derive(Serialize)]
struct Depot {
    id: i64,
    name: String,
    city: Option<String>,
    open: bool,
    created_at: String,
    updated_at: String,
}

type DepotRow = (i64, String, Option<String>, bool, String, String);

impl From<DepotRow> for Depot {
    fn from(r: DepotRow) -> Depot {
        Depot { id: r.0, name: r.1, city: r.2, open: r.3, created_at: r.4, updated_at: r.5 }
    }
}

const TRIP: &str = "SELECT \"id\", \"vehicle_id\", \"driver_id\", \"status\", \"distance_km\", \"starts_at\", \"note\", \"created_at\", \"updated_at\" FROM \"trip\" WHERE \"id\" = $1";
const TRIPS_PAGE: &str = "SELECT \"id\", \"vehicle_id\", \"driver_id\", \"status\", \"distance_km\", \"starts_at\", \"note\", \"created_at\", \"updated_at\" FROM \"trip\" ORDER BY \"id\" ASC LIMIT 21";
const DEPOTS_PAGE: &str = "SELECT \"id\", \"name\", \"city\", \"open\", \"created_at\", \"updated_at\" FROM \"depot\" WHERE \"open\" = $1 ORDER BY \"name\" DESC, \"id\" DESC LIMIT 21 OFFSET $2";
const INSERT_DEPOT: &str = "INSERT INTO \"depot\" (\"name\", \"city\", \"open\", \"created_at\", \"updated_at\") VALUES ($1, $2, TRUE, $3, $3) RETURNING \"id\", \"name\", \"city\", \"open\", \"created_at\", \"updated_at\"";
const PATCH_DEPOT: &str = "UPDATE \"depot\" SET \"city\" = CASE WHEN $2 THEN $3 ELSE \"city\" END, \"updated_at\" = $4 WHERE \"id\" = $1 RETURNING \"id\", \"name\", \"city\", \"open\", \"created_at\", \"updated_at\"";

fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// The body's tag ([`bench_servers::tag`]), as a header.
fn tag(bytes: &[u8]) -> HeaderValue {
    HeaderValue::from_str(&bench_servers::tag(bytes)).expect("base64url")
}

/// A JSON answer with its tag: a read's also with `Cache-Control: no-cache`, and 304
/// when `If-None-Match` names the tag.
fn answer(status: StatusCode, bytes: Vec<u8>, request: Option<&HeaderMap>) -> Response {
    let etag = tag(&bytes);
    let matched = request.and_then(|h| h.get(header::IF_NONE_MATCH)).is_some_and(|v| v.as_bytes() == etag.as_bytes());
    let mut response = if matched {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = (status, bytes).into_response();
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, etag);
    if request.is_some() {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    response
}

fn failed(_: impl std::fmt::Debug) -> StatusCode {
    StatusCode::INTERNAL_SERVER_ERROR
}

async fn trip(State(db): State<Db>, Path(id): Path<i64>, headers: HeaderMap) -> Result<Response, StatusCode> {
    let row: Option<TripRow> =
        on!(&db, pool => sqlx::query_as(TRIP).bind(id).fetch_optional(pool).await).map_err(failed)?;
    let trip = Trip::from(row.ok_or(StatusCode::NOT_FOUND)?);
    Ok(answer(StatusCode::OK, serde_json::to_vec(&trip).map_err(failed)?, Some(&headers)))
}

#[derive(Serialize)]
struct CursorPage<'a> {
    data: &'a [Trip],
    has_more: bool,
    next_cursor: Option<String>,
}

async fn trips(State(db): State<Db>, headers: HeaderMap) -> Result<Response, StatusCode> {
    let rows: Vec<TripRow> = on!(&db, pool => sqlx::query_as(TRIPS_PAGE).fetch_all(pool).await).map_err(failed)?;
    let has_more = rows.len() > 20;
    let data: Vec<Trip> = rows.into_iter().take(20).map(Trip::from).collect();
    // The opaque cursor a real API hands out: the last row's sort key, encoded.
    let next_cursor = has_more.then(|| {
        use base64::Engine;
        let key = json!({ "s": "", "v": [data.last().map(|t| t.id)] }).to_string();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key)
    });
    let link = next_cursor.as_ref().map(|c| format!("</v0/trips?limit=20&cursor={c}>; rel=\"next\""));
    let bytes = serde_json::to_vec(&CursorPage { data: &data, has_more, next_cursor }).map_err(failed)?;
    let mut response = answer(StatusCode::OK, bytes, Some(&headers));
    if let Some(link) = link {
        response.headers_mut().insert(header::LINK, HeaderValue::from_str(&link).map_err(failed)?);
    }
    Ok(response)
}

#[derive(Deserialize)]
struct DepotQuery {
    open: bool,
    sort: String,
    limit: i64,
    offset: i64,
}

#[derive(Serialize)]
struct OffsetPage<'a> {
    data: &'a [Depot],
    has_more: bool,
    offset: i64,
    limit: i64,
}

async fn depots(State(db): State<Db>, Query(q): Query<DepotQuery>, headers: HeaderMap) -> Result<Response, StatusCode> {
    // The one listing this bench asks for; a real handler would map each sort and size it
    // offers. The `LIMIT` is written, not bound: SQLite plans a statement again for each
    // bound `LIMIT` value, which the generated service avoids the same way.
    if q.sort != "name_desc" || q.limit != 20 || q.offset < 0 {
        return Err(StatusCode::BAD_REQUEST);
    }
    let rows: Vec<DepotRow> = on!(&db, pool => sqlx::query_as(DEPOTS_PAGE)
        .bind(q.open).bind(q.offset).fetch_all(pool).await)
    .map_err(failed)?;
    let has_more = rows.len() as i64 > q.limit;
    let data: Vec<Depot> = rows.into_iter().take(q.limit as usize).map(Depot::from).collect();
    let page = OffsetPage { data: &data, has_more, offset: q.offset, limit: q.limit };
    let mut response = answer(StatusCode::OK, serde_json::to_vec(&page).map_err(failed)?, Some(&headers));
    if has_more {
        let link = format!(
            "</v0/depots?open={}&sort={}&limit={}&offset={}>; rel=\"next\"",
            q.open,
            q.sort,
            q.limit,
            q.offset + q.limit
        );
        response.headers_mut().insert(header::LINK, HeaderValue::from_str(&link).map_err(failed)?);
    }
    Ok(response)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewDepot {
    name: String,
    city: Option<String>,
}

async fn create_depot(State(db): State<Db>, body: axum::Json<NewDepot>) -> Result<Response, StatusCode> {
    let new = body.0;
    if !(2..=60).contains(&new.name.chars().count()) {
        return Err(StatusCode::UNPROCESSABLE_ENTITY);
    }
    // Read to its end (`fetch_all`), as the generated store reads its writes: SQLite
    // checkpoints its log from a hook it runs only when a statement steps to its end, so
    // a write dropped after its row (`fetch_one`) leaves the log to grow without end, and
    // the comparison would set checkpoints against none.
    let rows: Vec<DepotRow> = on!(&db, pool => sqlx::query_as(INSERT_DEPOT)
        .bind(&new.name).bind(&new.city).bind(now()).fetch_all(pool).await)
    .map_err(|_| StatusCode::CONFLICT)?;
    let depot = Depot::from(rows.into_iter().next().ok_or(StatusCode::INTERNAL_SERVER_ERROR)?);
    let mut response = answer(StatusCode::CREATED, serde_json::to_vec(&depot).map_err(failed)?, None);
    let location = HeaderValue::from_str(&format!("/v0/depots/{}", depot.id)).map_err(failed)?;
    response.headers_mut().insert(header::LOCATION, location);
    Ok(response)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DepotPatch {
    #[serde(default, deserialize_with = "present")]
    city: Option<Option<String>>,
}

/// A member sent (even as `null`) is `Some`, one left out `None`: merge-patch semantics.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

async fn patch_depot(
    State(db): State<Db>,
    Path(id): Path<i64>,
    body: axum::body::Bytes,
) -> Result<Response, StatusCode> {
    let patch: DepotPatch = serde_json::from_slice(&body).map_err(|_| StatusCode::BAD_REQUEST)?;
    let (set, city) = match patch.city {
        Some(city) => (true, city),
        None => (false, None),
    };
    // The merge done in SQL: one statement, no read before it, read to its end as the
    // create's.
    let rows: Vec<DepotRow> = on!(&db, pool => sqlx::query_as(PATCH_DEPOT)
        .bind(id).bind(set).bind(city).bind(now()).fetch_all(pool).await)
    .map_err(failed)?;
    let depot = Depot::from(rows.into_iter().next().ok_or(StatusCode::NOT_FOUND)?);
    Ok(answer(StatusCode::OK, serde_json::to_vec(&depot).map_err(failed)?, None))
}
