//! The API's description is served without a key, as JSON at `/v1/openapi.json` and as a page at
//! `/docs`; both come from the same document, and the page loads nothing but its own stylesheet.

use actix_web::http::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, HeaderName};
use actix_web::{test, web};
use holdfast::http::app;
use holdfast::state::AppState;
use holdfast_api::openapi;
use holdfast_persistence::testing::TestDatabase;

fn header<B>(res: &actix_web::dev::ServiceResponse<B>, name: &HeaderName) -> String {
    res.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("{name} is missing or not text"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_and_its_page_are_served_without_a_key() {
    let db = TestDatabase::sqlite().await;
    // actix-web runs a request on its worker's LocalSet (`run_to_end`).
    tokio::task::LocalSet::new()
        .run_until(async move {
            let app = test::init_service(app(web::Data::new(AppState::new(db.open())))).await;

            let res = test::call_service(
                &app,
                test::TestRequest::get().uri(openapi::PATH).to_request(),
            )
            .await;
            assert_eq!(res.status(), 200);
            let served: serde_json::Value = test::read_body_json(res).await;
            assert_eq!(&served, openapi::document());

            // Only reading is open: anything else on the path is refused like any unknown route.
            let res = test::call_service(
                &app,
                test::TestRequest::post().uri(openapi::PATH).to_request(),
            )
            .await;
            assert_eq!(res.status(), 404);

            let res =
                test::call_service(&app, test::TestRequest::get().uri("/docs").to_request()).await;
            assert_eq!(res.status(), 200);
            assert!(header(&res, &CONTENT_TYPE).starts_with("text/html"));
            let policy = header(&res, &CONTENT_SECURITY_POLICY);
            assert!(
                policy.contains("default-src 'none'") && policy.contains("style-src 'self'"),
                "{policy}"
            );
            assert!(!policy.contains("unsafe"), "{policy}");
            let page = String::from_utf8(test::read_body(res).await.to_vec()).unwrap();
            assert!(
                !page.contains("<script") && !page.contains(" style="),
                "no script, no inline style"
            );
            for (path, item) in served["paths"].as_object().unwrap() {
                for method in item.as_object().unwrap().keys() {
                    let heading = format!(
                        r#"<span class="method">{}</span> <code>{}</code>"#,
                        method.to_uppercase(),
                        path
                    );
                    assert!(page.contains(&heading), "{method} {path} is on the page");
                }
            }
            for event in served["webhooks"].as_object().unwrap().keys() {
                assert!(page.contains(&format!("<code>{event}</code>")), "{event}");
            }

            let res = test::call_service(
                &app,
                test::TestRequest::get().uri("/docs/docs.css").to_request(),
            )
            .await;
            assert_eq!(res.status(), 200);
            assert!(header(&res, &CONTENT_TYPE).starts_with("text/css"));
        })
        .await;
}
