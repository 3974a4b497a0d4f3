//! Lists are served by the indexes the migrations create: SQLite's plan for the runtime's
//! own list queries searches an index and needs no sort of its own.

use restgen::list;
use restgen::store::Store;

async fn fleet_store() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("plan.db").display())).await.unwrap();
    store.migrate(fleet::generated::migrations::MIGRATIONS).await.unwrap();
    (store, dir)
}

async fn plan(store: &Store, spec: &'static restgen::spec::ResourceSpec, query: &str) -> String {
    let params: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect();
    let request = list::parse(spec, &|_| true, &params, None).expect("a valid list request");
    store.explain_list(spec, &request.query).await.unwrap().join("\n")
}

#[tokio::test]
async fn sorted_and_filtered_pages_use_an_index_and_no_extra_sort() {
    let (store, _dir) = fleet_store().await;
    let vehicles = &fleet::generated::resources::VEHICLE;
    let cases = [
        ("sort=capacity_desc&page=3", "vehicle_capacity_idx"),
        // Unique columns are served by the unique constraint's own index.
        ("sort=plate_asc", "USING INDEX"),
        ("kind=van", "vehicle_kind_idx"),
        // Integer ids are the rowid: a plain scan is already in id order.
        ("", "SCAN vehicle"),
    ];
    for (query, index) in cases {
        let p = plan(&store, vehicles, query).await;
        assert!(p.contains(index), "{query}: {p}");
        assert!(!p.contains("TEMP B-TREE"), "{query} sorts outside an index: {p}");
    }
    let trips = &fleet::generated::resources::TRIP;
    let p = plan(&store, trips, "sort=distance_km_desc").await;
    assert!(p.contains("trip_distance_km_idx") && !p.contains("TEMP B-TREE"), "{p}");
    let depots = &fleet::generated::resources::DEPOT;
    let p = plan(&store, depots, "sort=city_asc&offset=20").await;
    assert!(p.contains("depot_city_idx") && !p.contains("TEMP B-TREE"), "{p}");
}
