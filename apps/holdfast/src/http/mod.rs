//! The web server: the API and the pages (each a crate of its own), the health probes and the
//! icon, composed into one actix-web application under the middleware every request passes.

mod favicon;
mod health;

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::from_fn;
use actix_web::{App, Error, HttpServer, web};
use anyhow::Context;

use holdfast_api::routes;
use holdfast_web::ApiError;
use holdfast_web::{hygiene, request_context, run_to_end};

use crate::config::ServeArgs;
use crate::state::AppState;

/// The application, shared by `serve` and the in-process tests.
pub fn app(
    state: web::Data<AppState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    app_with(state, |_| {})
}

/// The application with extra services registered beside the declared ones; tests use it to
/// prove that an undeclared `/v1` route is never served.
pub fn app_with(
    state: web::Data<AppState>,
    extra: impl FnOnce(&mut web::ServiceConfig),
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    let catalogue = Arc::new(routes::catalogue());
    // Who a request came from is every door's question (`client_address`).
    let proxies = web::Data::from(state.trusted_proxies.clone());
    let api = web::Data::new(state.api());
    let pages = web::Data::new(state.pages());
    App::new()
        .app_data(state)
        .app_data(proxies)
        .app_data(api)
        .app_data(pages)
        .configure(health::config)
        .configure(favicon::config)
        .configure(holdfast_pages::configure)
        .configure(holdfast_api::configure)
        .configure(extra)
        .default_service(web::to(|| async { Err::<(), _>(ApiError::RouteNotFound) }))
        .wrap(from_fn(move |req, next| {
            routes::gate(catalogue.clone(), req, next)
        }))
        .wrap(from_fn(hygiene::middleware))
        .wrap(from_fn(run_to_end::middleware))
        .wrap(from_fn(request_context::middleware))
        .wrap(from_fn(holdfast_web::metrics::middleware))
}

/// Takes the address `serve` listens on, before anything else is touched: a second `serve`
/// on a taken port stops here, naming the address and its setting, with its data unchanged.
pub fn bind(args: &ServeArgs) -> anyhow::Result<TcpListener> {
    TcpListener::bind(args.bind).with_context(|| {
        format!(
            "cannot listen on {} (HOLDFAST_BIND or --bind): is another holdfast serving there?",
            args.bind
        )
    })
}

/// Serves on `listener` until SIGINT or SIGTERM, then drains in-flight requests (up to 30 s).
/// Should `fault` resolve first (a background loop of this process failed), stops the same way
/// and returns its error, so the process exits non-zero and is started again.
pub async fn serve(
    state: AppState,
    listener: TcpListener,
    args: &ServeArgs,
    shutdown: impl Future<Output = ()> + Send + 'static,
    fault: impl Future<Output = anyhow::Error>,
) -> anyhow::Result<()> {
    let address = listener.local_addr()?;
    let stopping = state.stopping.clone();
    let grace = args.shutdown_grace();
    let data = web::Data::new(state);
    let server = HttpServer::new(move || app(data.clone()))
        .listen(listener)?
        .shutdown_timeout(30)
        // Signals are handled once, in `system::ShutdownSignal`, which also stops the workers.
        .disable_signals()
        .workers(args.http_workers());
    tracing::info!(address = %address, "listening");
    let server = server.run();
    let handle = server.handle();
    let stopper = handle.clone();
    let not_ready = stopping.clone();
    tokio::spawn(async move {
        shutdown.await;
        not_ready.store(true, std::sync::atomic::Ordering::Relaxed);
        if !grace.is_zero() {
            tracing::info!(
                grace_ms = grace.as_millis(),
                "stopping: not ready, still serving"
            );
            tokio::time::sleep(grace).await;
        }
        tracing::info!("stopping");
        stopper.stop(true).await;
    });
    let mut server = std::pin::pin!(server);
    let failed = tokio::select! {
        result = &mut server => {
            result?;
            None
        }
        fault = fault => Some(fault),
    };
    if let Some(fault) = failed {
        stopping.store(true, std::sync::atomic::Ordering::Relaxed);
        tracing::error!(error = %fault, "stopping: a background worker failed");
        // `stop` sends its command at once; the server, polled below, carries it out and only
        // then answers the future it returns, so awaiting that here first would never end.
        drop(handle.stop(true));
        server.await?;
        return Err(fault);
    }
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod fault_tests {
    use std::time::Duration;

    use clap::Parser;
    use holdfast_persistence::testing::TestDatabase;

    use super::*;

    #[derive(Parser)]
    struct Args {
        #[command(flatten)]
        serve: ServeArgs,
    }

    /// A background loop's failure stops the server, which drains and returns the failure.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_fault_stops_the_server_and_is_returned() {
        let test_db = TestDatabase::sqlite().await;
        let state = AppState::new(test_db.open());
        let args = Args::parse_from(["serve", "--bind", "127.0.0.1:0", "--http-workers", "1"]);
        let fault = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            anyhow::anyhow!("a loop failed")
        };
        let listener = bind(&args.serve).unwrap();
        let served = tokio::time::timeout(
            Duration::from_secs(20),
            serve(state, listener, &args.serve, std::future::pending(), fault),
        )
        .await
        .expect("the server stops once a loop fails");
        assert_eq!(served.unwrap_err().to_string(), "a loop failed");
    }
}
