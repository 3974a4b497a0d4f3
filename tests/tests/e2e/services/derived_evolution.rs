//! A service written with the derive macros changes its resources between two builds: the
//! runtime plans the migration from the record its database keeps, as `restgen generate`
//! plans a generated service's, renames with `renamed_from`, keeps every record, and
//! refuses a build that would lose data, applying nothing.

use crate::backends;
use crate::support::harness::Server;
use restgen::App;
use serde_json::json;

/// The first build: jottings with a body.
#[allow(dead_code)] // records are read as JSON over HTTP, never as these structs
mod before {
    use restgen::__private::chrono::{DateTime, Utc};
    use restgen::__private::uuid::Uuid;
    use restgen::Resource;

    #[derive(Resource, serde::Deserialize)]
    #[resource(path = "/jottings", access(all = [anyone]))]
    pub struct Jotting {
        pub id: Uuid,
        #[field(settable, text)]
        pub body: String,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
    }
}

/// The next build: the resource renamed `memo`, `body` renamed `text`, a new field.
#[allow(dead_code)] // records are read as JSON over HTTP, never as these structs
mod after {
    use restgen::__private::chrono::{DateTime, Utc};
    use restgen::__private::uuid::Uuid;
    use restgen::Resource;

    #[derive(Resource, serde::Deserialize)]
    #[resource(path = "/jottings", renamed_from = "jotting", access(all = [anyone]))]
    pub struct Memo {
        pub id: Uuid,
        #[field(settable, text, renamed_from = "body")]
        pub text: String,
        #[field(settable, default = false)]
        pub pinned: bool,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
    }
}

/// A build that drops the body.
#[allow(dead_code)] // records are read as JSON over HTTP, never as these structs
mod lossy {
    use restgen::__private::chrono::{DateTime, Utc};
    use restgen::__private::uuid::Uuid;
    use restgen::Resource;

    #[derive(Resource, serde::Deserialize)]
    #[resource(path = "/jottings", access(all = [anyone]))]
    pub struct Jotting {
        pub id: Uuid,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
    }
}

fn first() -> restgen::serve::Service {
    App::new("jottings").resource::<before::Jotting>().into_service()
}

backends!(a_derived_service_migrates_its_own_storage_and_keeps_every_record, first());
async fn a_derived_service_migrates_its_own_storage_and_keeps_every_record(old: Server) {
    let made = old.post("/jottings", json!({ "body": "buy milk" })).await;
    assert_eq!(made.status, 201, "{}", made.text);
    let id = made.body["id"].as_str().unwrap().to_owned();

    // A build that would drop the body is refused, naming why; nothing of it applies.
    let store = restgen::store::Store::connect(old.database_url()).await.unwrap();
    let lossy = App::new("jottings").resource::<lossy::Jotting>().into_service();
    let refused = restgen::serve::migrate(&store, &lossy).await.expect_err("data would be lost");
    assert!(refused.to_string().contains("field `body` of `jotting` is gone"), "{refused}");
    assert_eq!(old.get(&format!("/jottings/{id}")).await.body["body"], "buy milk");

    // The next build renames and adds; the record comes through.
    let new = old.twin(App::new("jottings").resource::<after::Memo>().into_service()).await;
    drop(old);
    let got = new.get(&format!("/jottings/{id}")).await;
    assert_eq!(got.status, 200, "{}", got.text);
    assert_eq!(got.body["text"], "buy milk");
    assert_eq!(got.body["pinned"], false, "the new field's default fills the record stored");
    assert_eq!(got.body["created_at"], made.body["created_at"]);
    let pinned = new.post("/jottings", json!({ "text": "call mum", "pinned": true })).await;
    assert_eq!(pinned.status, 201, "{}", pinned.text);

    // Started again as it is, it has nothing to migrate.
    let again = new.twin(App::new("jottings").resource::<after::Memo>().into_service()).await;
    assert_eq!(again.get("/jottings").await.body["data"].as_array().map(Vec::len), Some(2));
}
