//! The gate fails closed: a `/v1` route registered outside the catalogue is never served, with a
//! key or without one. The control route outside `/v1` proves the extra registration works.

use actix_web::{test, web};
use holdfast::http::app_with;
use holdfast::state::AppState;
use holdfast_domain::platform::PlatformName;
use holdfast_domain::user::Email;
use holdfast_persistence::testing::TestDatabase;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undeclared_api_routes_are_never_served() {
    let db = TestDatabase::sqlite().await;
    let state = AppState::new(db.open());
    let created = state
        .platforms
        .create(
            &holdfast_domain::audit::Actor::operator(),
            PlatformName::parse("Acme").unwrap(),
            Email::parse("o@acme.test").unwrap(),
        )
        .await
        .unwrap();
    let private = created.keys[0].value.expose().to_owned();
    // actix-web runs a request on its worker's LocalSet (`run_to_end`).
    tokio::task::LocalSet::new()
        .run_until(async move {
            let app = test::init_service(app_with(web::Data::new(state), |cfg| {
                cfg.route("/v1/rogue", web::get().to(|| async { "served" }));
                cfg.route(
                    "/v1/merchants/{id}/rogue",
                    web::get().to(|| async { "served" }),
                );
                cfg.route("/rogue", web::get().to(|| async { "served" }));
            }))
            .await;

            for path in ["/v1/rogue", "/v1/merchants/mid_1/rogue"] {
                for key in [None, Some(private.as_str())] {
                    let mut req = test::TestRequest::get().uri(path);
                    if let Some(key) = key {
                        req = req.insert_header(("x-api-key", key));
                    }
                    let res = test::call_service(&app, req.to_request()).await;
                    assert_eq!(res.status(), 404, "{path} with key {key:?}");
                    let body = test::read_body(res).await;
                    assert_ne!(&body[..], b"served", "{path}");
                }
            }
            let control =
                test::call_service(&app, test::TestRequest::get().uri("/rogue").to_request()).await;
            assert_eq!(test::read_body(control).await, "served");
        })
        .await;
}
