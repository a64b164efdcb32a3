use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::Context;
use holdfast_domain::platform::PlatformName;
use holdfast_domain::services::CreatedPlatform;
use holdfast_domain::user::Email;
use holdfast_persistence::Database;

use crate::config::WebhookArgs;
use crate::config::{DatabaseArgs, MetricsArgs, PaymentArgs, ServeArgs, VaultArgs};
use crate::state::{AppState, Background};
use holdfast_cli::output;
use holdfast_web::rate_limit::RateLimits;

pub async fn run(
    database: &DatabaseArgs,
    payments: &PaymentArgs,
    vault: &VaultArgs,
    webhooks: &WebhookArgs,
    args: &ServeArgs,
    metrics: &MetricsArgs,
    public_url: Option<&str>,
) -> anyhow::Result<()> {
    let shutdown = crate::system::ShutdownSignal::listen()?;
    database.check_against(payments)?;
    // Bound first: a second `serve` on a taken address stops before it touches any data.
    let listener = crate::http::bind(args)?;
    let public_url = public_url.map_or_else(|| link_base(&listener), ToOwned::to_owned);
    // One vault, its key read once: it seals card data and the outbox's email bodies alike.
    let vault = Arc::new(vault.vault()?);
    // A bad BIN table stops start-up with its line number, before anything else is touched.
    let bins = payments.bins()?;
    let wallets = payments.wallets.wallets()?;
    let domain_association = payments.wallets.apple_pay_domain_association()?;
    let apple_pay_gateway = payments.wallets.apple_pay_gateway()?;
    let applied = Database::migrate(&database.url)
        .await
        .with_context(|| format!("migrating {}", database.url.redacted()))?;
    tracing::info!(
        database = database.url.redacted(),
        applied = applied.len(),
        "database ready"
    );
    // Each HTTP worker and each delivery loop drives connections of its own
    // (`holdfast_persistence::local_pools`), a share of the pool's size.
    let pool = database.pool().shared_among(
        args.http_workers()
            .saturating_add(webhooks.workers as usize),
    );
    let db = Database::open(&database.url, pool)?.sealing_emails(vault.clone());
    db.ping().await.context("database unreachable")?;
    // The notifications this process writes go straight to its own deliverers.
    let hand_off = webhooks.hand_off();
    let db = match &hand_off {
        Some((load, _)) => db.delivering(load.hints()),
        // Other processes deliver: they hear of what this one writes as it commits.
        None => db.announcing(webhooks.poll()),
    };
    let mut state =
        AppState::with_payments(db.clone(), bins, vault, wallets, payments, &public_url)?
            .with_rate_limits(RateLimits::new(args.rate_limits()))
            .with_trusted_proxies(args.trusted_proxies.clone())
            .with_max_subscriptions(webhooks.webhook_max_subscriptions)
            .with_secret_overlap(webhooks.secret_overlap())
            .with_apple_pay_domain_association(domain_association)
            .with_apple_pay_gateway(apple_pay_gateway.map(|g| Arc::new(g) as _))
            .with_public_url(&public_url);
    if args.bootstrap_demo {
        #[expect(clippy::expect_used, reason = "constant names within their rules")]
        let demo = state
            .platforms
            .bootstrap_demo(
                &holdfast_domain::audit::Actor::operator(),
                PlatformName::parse("Demo Platform").expect("valid"),
                Email::parse("owner@example.com").expect("valid"),
            )
            .await?;
        if let Some(created) = demo {
            let owner = &created.owner;
            let link =
                holdfast_cli::invite_link(&state.services, &created.platform.id, &owner.id, false)
                    .await?;
            print_demo(&created, &link);
        }
        // The demo platform's checkout page, with keys of its own made for this run.
        let demo = holdfast_pages::prepare_demo(&state).await?;
        if demo.is_some() {
            tracing::info!(path = "/demo", "the demo checkout is served");
        }
        state = state.with_demo(demo);
    }
    // Built before serving, so bad webhook or email settings stop start-up with the variable.
    let workers = webhooks.workers(Background::new(&db, &state), payments)?;
    let mut running = (webhooks.workers > 0).then(|| workers.spawn(webhooks.workers, hand_off));
    let fault = async {
        match running.as_mut() {
            Some(running) => running.fault().await,
            None => std::future::pending().await,
        }
    };
    let scraped = metrics
        .metrics_bind
        .map(|address| crate::metrics::serve(address, db.clone()))
        .transpose()?
        .map(|(handle, server)| (handle, tokio::spawn(server)));
    let served = crate::http::serve(state, listener, args, shutdown.received(), fault).await;
    if let Some(running) = running {
        running.shutdown().await;
    }
    if let Some((handle, server)) = scraped {
        handle.stop(true).await;
        let _ = server.await;
    }
    served
}

/// Where links point when `HOLDFAST_PUBLIC_URL` is not set: the address this process listens
/// on, so links work on any port; an address that listens everywhere is reached on loopback.
fn link_base(listener: &std::net::TcpListener) -> String {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let Ok(mut address) = listener.local_addr() else {
        return holdfast_domain::services::DEFAULT_PUBLIC_URL.to_owned();
    };
    if address.ip().is_unspecified() {
        let loopback = match address.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        };
        address = SocketAddr::new(loopback, address.port());
    }
    format!("http://{address}")
}

/// The demo keys go to standard output once, never to the log.
fn print_demo(created: &CreatedPlatform, sign_in_link: &str) {
    tracing::info!(platform = %created.platform.id, "created the demo platform (empty database)");
    let mut text = format!(
        "\nEmpty database: created the demo platform {} (owner {}).\n\
         Its default test keys, shown this once:\n",
        created.platform.id, created.owner.email
    );
    for key in &created.keys {
        let _ = writeln!(
            text,
            "  {:<20} {}",
            key.key.name.as_str(),
            key.value.expose()
        );
    }
    let _ = writeln!(
        text,
        "Set the owner's dashboard password (24 hours, once), then sign in at /dashboard:\n  {sign_in_link}"
    );
    output::print(&text);
}
