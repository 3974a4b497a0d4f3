//! A derived resource whose dates and datetimes are the `time` crate's types: the wire
//! is the same as with chrono's (RFC 3339, `YYYY-MM-DD`), through the record struct, the
//! inputs the derive emits in each of their shapes, a business rule, and the client.

use crate::backends;
use crate::support::harness::Server;
use restgen::__private::time::format_description::well_known::Rfc3339;
use restgen::__private::time::{Date, Month, OffsetDateTime};
use restgen::__private::uuid::Uuid;
use restgen::routes::Hooks;
use restgen::{App, Patch, Problem, Resource};
use serde_json::json;

/// A room booking, held with `time`'s types.
#[derive(Resource, serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
#[resource(path = "/bookings", access(all = [anyone]), pagination(style = cursor, default_size = 10))]
pub struct Booking {
    pub id: Uuid,
    /// Required, never null.
    #[field(settable, sort, filter)]
    #[serde(with = "restgen::time")]
    pub starts_at: OffsetDateTime,
    /// Required, but may be null (open-ended).
    #[field(settable, required)]
    #[serde(with = "restgen::time::option")]
    pub ends_at: Option<OffsetDateTime>,
    /// Optional, never null: absent takes the default.
    #[field(settable(create), default = "2030-01-01")]
    #[serde(with = "restgen::time")]
    pub book_until: Date,
    /// Optional and nullable.
    #[field(settable, filter)]
    #[serde(with = "restgen::time::option")]
    pub day: Option<Date>,
    #[serde(with = "restgen::time")]
    pub created_at: OffsetDateTime,
    #[serde(with = "restgen::time")]
    pub updated_at: OffsetDateTime,
}

/// A rule that reads the record as `time`'s types: a booking ends after it starts.
fn in_order(booking: &mut Booking) -> Result<(), Problem> {
    match booking.ends_at {
        Some(end) if end <= booking.starts_at => Err(Problem::unprocessable("a booking ends after it starts")),
        _ => Ok(()),
    }
}

/// A body that is not a resource, with `time`'s types: a request to move a booking.
#[derive(restgen::Input, serde::Serialize)]
pub struct Reschedule {
    #[field(settable)]
    #[serde(with = "restgen::time")]
    pub to: OffsetDateTime,
    #[field(settable, default = "2030-01-01")]
    #[serde(with = "restgen::time")]
    pub by: Date,
    /// Stamped by the service, never sent.
    #[field(default = now)]
    #[serde(with = "restgen::time")]
    pub asked_at: OffsetDateTime,
}

/// Echoes what the form let through.
async fn reschedule(restgen::Valid(form): restgen::Valid<Reschedule>) -> restgen::__private::axum::Json<Reschedule> {
    restgen::__private::axum::Json(form)
}

fn service() -> restgen::serve::Service {
    use restgen::__private::axum::{Router, routing::post};
    App::new("rooms")
        .base_path("/api")
        .resource_with::<Booking>(Hooks::default().compute(in_order))
        .routes(Router::new().route("/api/reschedule", post(reschedule)))
        .into_service()
}

fn at(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &Rfc3339).unwrap()
}

backends!(time_types_read_and_write_the_wire_forms, service());
async fn time_types_read_and_write_the_wire_forms(s: Server) {
    let r = s
        .post(
            "/api/bookings",
            json!({ "starts_at": "2026-12-01T10:00:00+01:00", "ends_at": null, "day": "2026-12-01" }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["book_until"], "2030-01-01", "the default of a field absent at create");
    let booking: Booking = serde_json::from_value(r.body.clone()).expect("the record reads as the struct");
    assert_eq!(booking.starts_at, at("2026-12-01T09:00:00Z"), "the same instant");
    assert_eq!(booking.day, Some(Date::from_calendar_date(2026, Month::December, 1).unwrap()));
    assert_eq!(booking.ends_at, None);
    assert!(booking.updated_at >= booking.created_at);

    let on_the_day = s.get("/api/bookings?day=2026-12-01").await;
    assert_eq!(on_the_day.body["data"].as_array().map(Vec::len), Some(1), "{}", on_the_day.text);
    assert_eq!(s.get("/api/bookings?day=2026-12-02").await.body["data"], json!([]));

    // The required nullable field must be sent; the rule sees the record as the struct.
    let missing = s.post("/api/bookings", json!({ "starts_at": "2026-12-02T10:00:00Z" })).await;
    missing.assert_problem(400);
    assert_eq!(missing.error_fields(), ["ends_at"], "{}", missing.text);
    let reversed = s
        .post("/api/bookings", json!({ "starts_at": "2026-12-02T10:00:00Z", "ends_at": "2026-12-02T09:00:00Z" }))
        .await;
    reversed.assert_problem(422);
    for (field, value) in [("starts_at", "2026-12-02 10:00"), ("day", "2026-13-01"), ("book_until", "soon")] {
        let mut body = json!({ "starts_at": "2026-12-02T10:00:00Z", "ends_at": null });
        body[field] = json!(value);
        let r = s.post("/api/bookings", body).await;
        r.assert_problem(400);
        assert_eq!(r.error_fields(), [field], "{}", r.text);
    }

    // Patch: null clears a nullable date; a datetime changes; the rule still holds.
    let path = r.header("location").unwrap().to_owned();
    let patched = s.send("PATCH", &path, Some(json!({ "day": null, "ends_at": "2026-12-01T11:00:00Z" }))).await;
    assert_eq!(patched.status, 200, "{}", patched.text);
    let patched: Booking = serde_json::from_value(patched.body).unwrap();
    assert_eq!((patched.day, patched.ends_at), (None, Some(at("2026-12-01T11:00:00Z"))));
    s.send("PATCH", &path, Some(json!({ "ends_at": "2026-12-01T08:00:00Z" }))).await.assert_problem(422);

    // Sorts compare instants.
    let later = s.post("/api/bookings", json!({ "starts_at": "2026-12-03T08:00:00Z", "ends_at": null })).await;
    assert_eq!(later.status, 201, "{}", later.text);
    let sorted = s.get("/api/bookings?sort=starts_at_desc").await;
    assert_eq!(sorted.status, 200, "{}", sorted.text);
    let starts: Vec<&str> = sorted.body["data"].as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap()).collect();
    assert_eq!(starts, [later.body["id"].as_str().unwrap(), booking.id.to_string().as_str()]);
}

backends!(a_client_sends_time_types_in_every_input_shape, service());
async fn a_client_sends_time_types_in_every_input_shape(s: Server) {
    use restgen_client::{Builder, ServiceInfo, Transport};
    let info =
        ServiceInfo { base_path: "/api", login_path: None, login_identifier: "", api_key_header: None, versions: None };
    let client: Transport = Builder::new(info, &s.base).build().unwrap();
    let bookings = client.collection::<Booking>();
    let day = Date::from_calendar_date(2027, Month::January, 5).unwrap();
    let created = bookings
        .create(&CreateBooking {
            starts_at: at("2027-01-05T09:30:00Z"),
            ends_at: Some(at("2027-01-05T10:30:00Z")),
            book_until: Some(Date::from_calendar_date(2026, Month::December, 31).unwrap()),
            day: Patch::Value(day),
        })
        .await
        .unwrap();
    assert_eq!((created.day, created.book_until.to_string()), (Some(day), "2026-12-31".to_owned()));

    let replaced = bookings
        .replace(
            created.id,
            &ReplaceBooking { starts_at: at("2027-01-06T09:30:00Z"), ends_at: None, day: Patch::Absent },
        )
        .await
        .unwrap();
    assert_eq!((replaced.starts_at, replaced.ends_at, replaced.day), (at("2027-01-06T09:30:00Z"), None, None));
    let patched = bookings.patch(created.id, &PatchBooking { day: Patch::Value(day), ..PatchBooking::default() }).await;
    assert_eq!(patched.unwrap().day, Some(day));
    let cleared = bookings.patch(created.id, &PatchBooking { day: Patch::Null, ..PatchBooking::default() }).await;
    assert_eq!(cleared.unwrap().day, None);
    assert_eq!(bookings.get(created.id).await.unwrap().book_until.to_string(), "2026-12-31");
}

backends!(a_body_type_reads_time_types_and_stamps_its_own, service());
async fn a_body_type_reads_time_types_and_stamps_its_own(s: Server) {
    let before = OffsetDateTime::now_utc();
    let r = s.post("/api/reschedule", json!({ "to": "2027-02-01T12:00:00+02:00" })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(at(r.body["to"].as_str().unwrap()), at("2027-02-01T10:00:00Z"));
    assert_eq!(r.body["by"], "2030-01-01");
    let asked_at = at(r.body["asked_at"].as_str().unwrap());
    assert!(asked_at >= before && asked_at <= OffsetDateTime::now_utc(), "stamped now: {asked_at}");
    let r =
        s.post("/api/reschedule", json!({ "to": "2027-02-01T12:00:00Z", "asked_at": "2020-01-01T00:00:00Z" })).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["asked_at"], "{}", r.text);
    let r = s.post("/api/reschedule", json!({ "to": "tomorrow" })).await;
    r.assert_problem(400);
    assert_eq!(r.error_fields(), ["to"], "{}", r.text);
}
