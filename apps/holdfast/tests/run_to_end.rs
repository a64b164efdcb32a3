//! A request runs to its end whatever its client does, and a panic in one is its own 500: the
//! envelope with the request id, and the worker serves on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actix_web::{HttpResponse, test, web};
use holdfast::http::app_with;
use holdfast::state::AppState;
use holdfast_persistence::testing::TestDatabase;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_a_request_is_its_500_and_the_worker_serves_on() {
    let db = TestDatabase::sqlite().await;
    // actix-web runs a request on its worker's LocalSet (`run_to_end`).
    tokio::task::LocalSet::new()
        .run_until(async move {
            let app =
                test::init_service(app_with(web::Data::new(AppState::new(db.open())), |cfg| {
                    // The test-only hook: a handler with a bug.
                    cfg.route(
                        "/panics",
                        web::get().to(|| async {
                            assert!(!std::hint::black_box(true), "a handler's bug");
                            HttpResponse::Ok().finish()
                        }),
                    );
                }))
                .await;
            for _ in 0..3 {
                // The error the server renders as its answer, as actix does on a connection.
                let res = test::try_call_service(
                    &app,
                    test::TestRequest::get().uri("/panics").to_request(),
                )
                .await
                .err()
                .expect("an error for the server to render")
                .error_response();
                assert_eq!(res.status(), 500);
                let id = res
                    .headers()
                    .get("x-request-id")
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                let body = actix_web::body::to_bytes(res.into_body()).await.unwrap();
                let body: Value = serde_json::from_slice(&body).unwrap();
                assert_eq!(body["error"]["code"], "internal_error");
                assert_eq!(body["error"]["requestId"], id.as_str());
                assert!(!body.to_string().contains("a handler's bug"), "{body}");
                let health =
                    test::call_service(&app, test::TestRequest::get().uri("/healthz").to_request())
                        .await;
                assert_eq!(health.status(), 200);
            }
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_client_goes_away_still_runs_to_its_end() {
    let db = TestDatabase::sqlite().await;
    // actix-web runs a request on its worker's LocalSet (`run_to_end`).
    tokio::task::LocalSet::new()
        .run_until(async move {
            let started = Arc::new(tokio::sync::Notify::new());
            let finished = Arc::new(AtomicBool::new(false));
            let (s, f) = (started.clone(), finished.clone());
            let app = test::init_service(app_with(
                web::Data::new(AppState::new(db.open())),
                move |cfg| {
                    cfg.route(
                        "/slow",
                        web::get().to(move || {
                            let (started, finished) = (s.clone(), f.clone());
                            async move {
                                started.notify_one();
                                tokio::time::sleep(Duration::from_millis(100)).await;
                                finished.store(true, Ordering::SeqCst);
                                HttpResponse::Ok().finish()
                            }
                        }),
                    );
                },
            ))
            .await;
            let call = test::call_service(&app, test::TestRequest::get().uri("/slow").to_request());
            // The client hangs up as soon as the handler has begun: its future is dropped.
            tokio::select! {
                _ = call => panic!("answered before the handler began"),
                () = started.notified() => {}
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(finished.load(Ordering::SeqCst), "the handler was cut short");
        })
        .await;
}
