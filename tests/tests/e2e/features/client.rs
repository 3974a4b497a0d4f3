//! The generated clients against the running services: every operation, every pagination
//! style streamed across pages, typed filters and sorts, credentials, typed errors.

use crate::backends;
use crate::support::accounts::{self, PASSWORD};
use crate::support::harness::Server;
use futures_util::TryStreamExt;
use restgen_client::{Auth, Error};

fn shop_as(s: &Server, auth: Auth) -> shop_client::Client {
    shop_client::Client::builder(&s.base).auth(auth).build().expect("client builds")
}

fn status(e: &Error) -> u16 {
    e.status().unwrap_or_else(|| panic!("expected an answer from the service, got {e}"))
}

// Basic is among the credentials tried, so the shop with every scheme.
backends!(every_shop_operation_works_through_the_client, crate::support::harness::shop_with_every_scheme());
async fn every_shop_operation_works_through_the_client(s: Server) {
    use shop_client::*;
    let anonymous = shop_as(&s, Auth::None);
    anonymous.healthz().await.unwrap();
    anonymous.readyz().await.unwrap();

    // Register, then sign in by logging in.
    let input = CreateUser { name: "Ann".into(), email: "ann@example.com".into(), password: PASSWORD.into() };
    let ann = anonymous.create_user(&input).await.unwrap();
    assert!(!ann.is_admin && ann.roles.is_empty());
    let client = shop_as(&s, Auth::login("ann@example.com", PASSWORD));
    assert_eq!(client.get_user(ann.id).await.unwrap(), ann);
    let renamed = client.update_user(ann.id, &PatchUser { name: Some("Ann B".into()) }).await.unwrap();
    assert_eq!(renamed.name, "Ann B");
    let replaced = client.replace_user(ann.id, &ReplaceUser { name: "Ann C".into() }).await.unwrap();
    assert_eq!((replaced.name.as_str(), replaced.email.as_str()), ("Ann C", "ann@example.com"));
    let token = client.login("ann@example.com", PASSWORD).await.unwrap();
    assert_eq!(token.token_type, "Bearer");
    assert!(token.expires_in > 0);

    // Customers: page style, bare envelope.
    for (name, city) in [("Ada", "Oslo"), ("Bo", "Rome"), ("Cy", "Oslo"), ("Di", "Lima"), ("Ed", "Oslo")] {
        let c =
            CreateCustomer { name: name.into(), email: None, city: Patch::Value(city.into()), phone: Patch::Absent };
        client.create_customer(&c).await.unwrap();
    }
    let all: Vec<Customer> = client.list_customers().per_page(2).stream().try_collect().await.unwrap();
    assert_eq!(all.len(), 5, "five records over three pages");
    let names: Vec<String> = client
        .list_customers()
        .sort([CustomerSort::NameDesc])
        .per_page(2)
        .stream()
        .map_ok(|c| c.name)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(names, ["Ed", "Di", "Cy", "Bo", "Ada"]);
    let oslo = client.list_customers().city("Oslo").sort([CustomerSort::NameAsc]).send().await.unwrap();
    assert_eq!(oslo.items.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Ada", "Cy", "Ed"]);
    assert!(!oslo.has_more);
    let first = client.list_customers().per_page(2).send().await.unwrap();
    assert!(first.has_more && first.items.len() == 2 && first.next_cursor.is_none());
    let ada = &oslo.items[0];
    let moved =
        client.update_customer(ada.id, &PatchCustomer { city: Patch::Null, ..Default::default() }).await.unwrap();
    assert_eq!(moved.city, None, "null clears");
    let put = ReplaceCustomer {
        name: "Ada L".into(),
        email: Some("ada@example.com".into()),
        city: Patch::Absent,
        phone: Patch::Absent,
        staff_note: Patch::Absent,
    };
    let replaced = client.replace_customer(ada.id, &put).await.unwrap();
    assert_eq!((replaced.email.as_deref(), replaced.city.as_deref()), (Some("ada@example.com"), None));
    assert_eq!(client.get_customer(ada.id).await.unwrap(), replaced);

    // Orders: cursor style, `data` envelope, nested under the user.
    let bo = all.iter().find(|c| c.name == "Bo").unwrap();
    let mut orders = Vec::new();
    for cents in [100, 200, 300, 400, 500] {
        let input =
            CreateOrder { total_cents: cents, customer_id: Patch::Value(bo.id), note: Patch::Absent, gift_wrap: None };
        orders.push(client.create_order(&input).await.unwrap());
    }
    assert!(orders.iter().all(|o| o.status == OrderStatus::Pending && o.owner_id == ann.id));
    let streamed: Vec<Order> = client.list_orders().limit(2).stream().try_collect().await.unwrap();
    assert_eq!(streamed.len(), 5);
    let page = client.list_orders().limit(2).send().await.unwrap();
    assert!(page.has_more && page.next_cursor.is_some());
    let rest: Vec<Order> =
        client.list_orders().limit(2).cursor(page.next_cursor.unwrap()).stream().try_collect().await.unwrap();
    assert_eq!(rest.len(), 3, "a cursor continues where its page ended");
    let newest_first: Vec<i64> = client
        .list_orders()
        .sort([OrderSort::CreatedAtDesc])
        .limit(2)
        .stream()
        .map_ok(|o| o.total_cents)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(newest_first, [500, 400, 300, 200, 100]);
    let after: Vec<Order> = client
        .list_orders()
        .sort([OrderSort::IdAsc])
        .starting_after(streamed[0].id)
        .stream()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(after.len(), 4);
    let nested: Vec<Order> = client.list_orders_of_user(ann.id).limit(2).stream().try_collect().await.unwrap();
    assert_eq!(nested.len(), 5);
    let pending = client.list_orders().status(OrderStatus::Pending).customer_id(bo.id).send().await.unwrap();
    assert_eq!(pending.items.len(), 5);
    assert!(client.list_orders().status(OrderStatus::Paid).send().await.unwrap().items.is_empty());
    let order = &orders[0];
    assert_eq!(&client.get_order(order.id).await.unwrap(), order);
    let noted = client
        .update_order(order.id, &PatchOrder { note: Patch::Value("ring twice".into()), gift_wrap: None })
        .await
        .unwrap();
    assert_eq!(noted.note.as_deref(), Some("ring twice"));
    let cleared = client.replace_order(order.id, &ReplaceOrder { note: Patch::Absent, gift_wrap: None }).await.unwrap();
    assert_eq!(cleared.note, None, "PUT clears what it omits");
    client.delete_order(order.id).await.unwrap();
    let gone = client.get_order(order.id).await.unwrap_err();
    assert_eq!(status(&gone), 404);

    // Invoices are read-only: get and list.
    assert!(client.list_invoices().send().await.unwrap().items.is_empty());
    assert_eq!(status(&client.get_invoice(order.id).await.unwrap_err()), 404);

    // Problems arrive typed, with the field named.
    let bad = client
        .create_customer(&CreateCustomer {
            name: String::new(),
            email: None,
            city: Patch::Absent,
            phone: Patch::Absent,
        })
        .await;
    let problem = bad.unwrap_err().problem().cloned().expect("a problem");
    assert_eq!(problem.status, 400);
    assert!(problem.field("name").is_some(), "{problem:?}");
    assert_eq!(status(&anonymous.list_orders().send().await.unwrap_err()), 401);
    let wrong = shop_as(&s, Auth::login("ann@example.com", "not the password"));
    assert_eq!(status(&wrong.list_orders().send().await.unwrap_err()), 401);

    // API keys: created, listed, used, revoked.
    let key = client.create_api_key(Some("ci")).await.unwrap();
    assert!(key.key.starts_with("rk_"));
    assert!(client.list_api_keys().await.unwrap().iter().any(|k| k.id == key.id && k.name.as_deref() == Some("ci")));
    let by_key = shop_as(&s, Auth::api_key(&key.key));
    assert_eq!(by_key.list_orders().send().await.unwrap().items.len(), 4);
    client.revoke_api_key(&key.id).await.unwrap();
    assert_eq!(status(&by_key.list_orders().send().await.unwrap_err()), 401);

    // Basic credentials.
    let basic = shop_as(&s, Auth::basic("ann@example.com", PASSWORD));
    assert_eq!(basic.get_user(ann.id).await.unwrap().id, ann.id);

    // An admin deletes the account: it is gone, and its credentials log in no more.
    let admin = accounts::admin(&s, "root").await;
    let root = shop_as(&s, Auth::bearer(admin.token));
    root.delete_user(ann.id).await.unwrap();
    assert_eq!(status(&root.get_user(ann.id).await.unwrap_err()), 404);
    let again = shop_as(&s, Auth::login("ann@example.com", PASSWORD));
    assert_eq!(status(&again.list_orders().send().await.unwrap_err()), 401);
}

backends!(every_fleet_paging_style_streams_across_pages, fleet::service());
async fn every_fleet_paging_style_streams_across_pages(s: Server) {
    use fleet_client::*;
    let client = Client::new(&s.base).unwrap();
    // Offset style (depots, `data` envelope).
    let mut depots = Vec::new();
    for name in ["North", "South", "East", "West", "Mid", "Port", "Hill"] {
        let input = CreateDepot { name: name.into(), city: Patch::Null, open: None };
        depots.push(client.create_depot(&input).await.unwrap());
    }
    let names: Vec<String> = client
        .list_depots()
        .sort([DepotSort::NameAsc])
        .limit(3)
        .stream()
        .map_ok(|d| d.name)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(names, ["East", "Hill", "Mid", "North", "Port", "South", "West"]);
    let skipped = client.list_depots().sort([DepotSort::IdAsc]).offset(5).limit(3).send().await.unwrap();
    assert_eq!(skipped.items.iter().map(|d| d.id).collect::<Vec<_>>(), [depots[5].id, depots[6].id]);
    assert!(!skipped.has_more);

    // Offset style with another envelope key (drivers, `results`), nested under a depot.
    let north = &depots[0];
    for n in 0..4 {
        let input = CreateDriver {
            name: format!("Driver {n}"),
            email: format!("d{n}@example.com"),
            depot_id: north.id,
            rating: Patch::Absent,
            licence: Some(format!("AB{n:06}")),
            hired_on: None,
        };
        client.create_driver(&input).await.unwrap();
    }
    let drivers: Vec<Driver> = client.list_drivers_of_depot(north.id).limit(3).stream().try_collect().await.unwrap();
    assert_eq!(drivers.len(), 4);
    assert_eq!(client.list_drivers().depot_id(depots[1].id).send().await.unwrap().items.len(), 0);

    // Page style, bare envelope (vehicles).
    for n in 0..6 {
        let kind = if n % 2 == 0 { VehicleKind::Van } else { VehicleKind::Truck };
        let input = CreateVehicle {
            plate: format!("EL{n:05}"),
            kind,
            capacity: Some(100 * n),
            depot_id: Patch::Value(north.id),
            specs: Patch::Absent,
        };
        client.create_vehicle(&input).await.unwrap();
    }
    let vans: Vec<Vehicle> =
        client.list_vehicles().kind(VehicleKind::Van).per_page(2).stream().try_collect().await.unwrap();
    assert_eq!(vans.len(), 3);
    let by_capacity: Vec<i64> = client
        .list_vehicles_of_depot(north.id)
        .sort([VehicleSort::CapacityDesc])
        .per_page(4)
        .stream()
        .map_ok(|v| v.capacity)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(by_capacity, [500, 400, 300, 200, 100, 0]);
    let second = client.list_vehicles().per_page(4).page(2).send().await.unwrap();
    assert_eq!((second.items.len(), second.has_more), (2, false));

    // Cursor style (trips), with a datetime sort.
    let vehicle = client.list_vehicles().send().await.unwrap().items[0].id;
    let driver = drivers[0].id;
    let start =
        restgen_client::__private::chrono::DateTime::parse_from_rfc3339("2026-05-01T08:00:00Z").unwrap().to_utc();
    for h in 0..5 {
        let input = CreateTrip {
            vehicle_id: vehicle,
            driver_id: driver,
            distance_km: None,
            starts_at: start + restgen_client::__private::chrono::Duration::hours(h),
            note: Patch::Absent,
        };
        client.create_trip(&input).await.unwrap();
    }
    let latest_first: Vec<Trip> = client
        .list_trips_of_driver(driver)
        .sort([TripSort::StartsAtDesc])
        .limit(2)
        .stream()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(latest_first.len(), 5);
    assert!(latest_first.windows(2).all(|w| w[0].starts_at > w[1].starts_at));
    assert_eq!(
        client.list_trips().vehicle_id(vehicle).status(TripStatus::Planned).send().await.unwrap().items.len(),
        5
    );
}

/// A generated client's enums (field values, sort keys) implement `restgen_client::Enum`,
/// as a service's and a hand-written `#[derive(restgen::Enum)]` one do.
#[test]
fn generated_client_enums_implement_the_enum_trait() {
    use restgen_client::Enum;
    use shop_client::models::OrderStatus;
    assert_eq!(OrderStatus::VALUES, ["pending", "paid", "shipped", "cancelled"]);
    assert_eq!(OrderStatus::from_value("shipped"), Some(OrderStatus::Shipped));
    assert_eq!(OrderStatus::from_value("Shipped"), None);
    assert_eq!(shop_client::OrderSort::from_value("id_desc"), Some(shop_client::OrderSort::IdDesc));
    assert_eq!(shop_client::OrderSort::IdDesc.value(), "id_desc");
}
