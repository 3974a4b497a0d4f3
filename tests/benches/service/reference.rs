//! The hand-written reference: what a careful engineer writes with axum and sqlx for the
//! routes the bench asks (docs/performance.md).

use super::*;

/// The reference's pools: 2 connections per core on SQLite (WAL, `synchronous=NORMAL`,
/// foreign keys on, 5 s busy timeout), 4 per core on PostgreSQL; no ping before each use.
#[derive(Clone)]
pub(super) enum Db {
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

pub(super) async fn hand_written(url: &str, pool_timeout: Duration) -> Router {
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
pub(super) struct Trip {
    pub(super) id: i64,
    pub(super) vehicle_id: i64,
    pub(super) driver_id: i64,
    pub(super) status: String,
    pub(super) distance_km: String,
    pub(super) starts_at: String,
    pub(super) note: Option<String>,
    pub(super) created_at: String,
    pub(super) updated_at: String,
}

pub(super) type TripRow = (i64, i64, i64, String, String, String, Option<String>, String, String);

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
pub(super) struct Depot {
    pub(super) id: i64,
    pub(super) name: String,
    pub(super) city: Option<String>,
    pub(super) open: bool,
    pub(super) created_at: String,
    pub(super) updated_at: String,
}

pub(super) type DepotRow = (i64, String, Option<String>, bool, String, String);

impl From<DepotRow> for Depot {
    fn from(r: DepotRow) -> Depot {
        Depot { id: r.0, name: r.1, city: r.2, open: r.3, created_at: r.4, updated_at: r.5 }
    }
}

pub(super) const TRIP: &str = "SELECT \"id\", \"vehicle_id\", \"driver_id\", \"status\", \"distance_km\", \"starts_at\", \"note\", \"created_at\", \"updated_at\" FROM \"trip\" WHERE \"id\" = $1";
pub(super) const TRIPS_PAGE: &str = "SELECT \"id\", \"vehicle_id\", \"driver_id\", \"status\", \"distance_km\", \"starts_at\", \"note\", \"created_at\", \"updated_at\" FROM \"trip\" ORDER BY \"id\" ASC LIMIT 21";
pub(super) const DEPOTS_PAGE: &str = "SELECT \"id\", \"name\", \"city\", \"open\", \"created_at\", \"updated_at\" FROM \"depot\" WHERE \"open\" = $1 ORDER BY \"name\" DESC, \"id\" DESC LIMIT 21 OFFSET $2";
pub(super) const INSERT_DEPOT: &str = "INSERT INTO \"depot\" (\"name\", \"city\", \"open\", \"created_at\", \"updated_at\") VALUES ($1, $2, TRUE, $3, $3) RETURNING \"id\", \"name\", \"city\", \"open\", \"created_at\", \"updated_at\"";
pub(super) const PATCH_DEPOT: &str = "UPDATE \"depot\" SET \"city\" = CASE WHEN $2 THEN $3 ELSE \"city\" END, \"updated_at\" = $4 WHERE \"id\" = $1 RETURNING \"id\", \"name\", \"city\", \"open\", \"created_at\", \"updated_at\"";

pub(super) fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// 128 bits of the body's SHA-256, base64url: the strong tag the generated service sends.
pub(super) fn tag(bytes: &[u8]) -> HeaderValue {
    use base64::Engine;
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let tag = format!("\"{}\"", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..16]));
    HeaderValue::from_str(&tag).expect("base64url")
}

/// A JSON answer with its tag: a read's also with `Cache-Control: no-cache`, and 304
/// when `If-None-Match` names the tag.
pub(super) fn answer(status: StatusCode, bytes: Vec<u8>, request: Option<&HeaderMap>) -> Response {
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

pub(super) fn failed(_: impl std::fmt::Debug) -> StatusCode {
    StatusCode::INTERNAL_SERVER_ERROR
}

pub(super) async fn trip(
    State(db): State<Db>,
    Path(id): Path<i64>,
    headers: HeaderMap,
) -> Result<Response, StatusCode> {
    let row: Option<TripRow> =
        on!(&db, pool => sqlx::query_as(TRIP).bind(id).fetch_optional(pool).await).map_err(failed)?;
    let trip = Trip::from(row.ok_or(StatusCode::NOT_FOUND)?);
    Ok(answer(StatusCode::OK, serde_json::to_vec(&trip).map_err(failed)?, Some(&headers)))
}

#[derive(Serialize)]
pub(super) struct CursorPage<'a> {
    pub(super) data: &'a [Trip],
    pub(super) has_more: bool,
    pub(super) next_cursor: Option<String>,
}

pub(super) async fn trips(State(db): State<Db>, headers: HeaderMap) -> Result<Response, StatusCode> {
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
pub(super) struct DepotQuery {
    pub(super) open: bool,
    pub(super) sort: String,
    pub(super) limit: i64,
    pub(super) offset: i64,
}

#[derive(Serialize)]
pub(super) struct OffsetPage<'a> {
    pub(super) data: &'a [Depot],
    pub(super) has_more: bool,
    pub(super) offset: i64,
    pub(super) limit: i64,
}

pub(super) async fn depots(
    State(db): State<Db>,
    Query(q): Query<DepotQuery>,
    headers: HeaderMap,
) -> Result<Response, StatusCode> {
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
pub(super) struct NewDepot {
    pub(super) name: String,
    pub(super) city: Option<String>,
}

pub(super) async fn create_depot(State(db): State<Db>, body: axum::Json<NewDepot>) -> Result<Response, StatusCode> {
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
pub(super) struct DepotPatch {
    #[serde(default, deserialize_with = "present")]
    pub(super) city: Option<Option<String>>,
}

/// A member sent (even as `null`) is `Some`, one left out `None`: merge-patch semantics.
pub(super) fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

pub(super) async fn patch_depot(
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
