use super::*;
use clap::CommandFactory;

#[test]
fn cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

/// The defaults the README and docs/security.md document, as `serve` reads them: a limit
/// turned off (0) by a slip here would pass every other test, which turn limits off.
#[test]
fn the_documented_defaults() {
    let cli = Cli::try_parse_from(["holdfast", "serve"]).unwrap();
    let Command::Serve(serve) = &cli.command else {
        panic!("serve")
    };
    let rates = serve.rate_limits();
    let per = |rate: Option<std::num::NonZeroU32>| rate.map_or(0, std::num::NonZeroU32::get);
    assert_eq!(
        (
            per(rates.private_per_s),
            per(rates.public_per_s),
            per(rates.failed_auth_per_min)
        ),
        (100, 20, 60)
    );
    assert_eq!(
        serve.trusted_proxies,
        holdfast_web::client_address::TrustedProxies::NONE,
        "no X-Forwarded-For believed unless proxies are named"
    );
    let w = &cli.webhooks;
    assert_eq!(
        (
            w.webhook_concurrency,
            w.webhook_subscription_in_flight,
            w.webhook_platform_in_flight,
            w.webhook_max_subscriptions,
            w.webhook_secret_overlap_s,
        ),
        (128, 16, 64, 16, 86_400)
    );
    assert_eq!((w.worker_poll_ms, w.worker_idle_poll_ms), (50, 1_000));
    assert_eq!(cli.database.completion_wait_ms, 20_000);
    // The reconcile age leaves room for the processor timeout and the completion wait.
    cli.database.check_against(&cli.payments).unwrap();
}

/// Settings are refused at start-up when a payment could complete approved after its hold
/// of its client session lapsed (the checkout could then pay twice), and when the reconcile
/// age leaves no room for the processor timeout and completion wait.
#[test]
fn timing_settings_that_break_a_rule_are_refused() {
    // (reconcile age, processor timeout, completion wait, the words of the refusal)
    let cases = [
        ("250000", "10000", "20000", "client session"),
        ("230000", "10000", "200000", "client session"),
        ("20000", "10000", "20000", "must exceed"),
    ];
    for (after, timeout, wait, refusal) in cases {
        let cli = Cli::try_parse_from([
            "holdfast",
            "--reconcile-after-ms",
            after,
            "--processor-timeout-ms",
            timeout,
            "--db-completion-wait-ms",
            wait,
            "serve",
        ])
        .unwrap();
        let err = cli.database.check_against(&cli.payments).unwrap_err();
        assert!(
            err.to_string().contains(refusal),
            "{after}/{timeout}/{wait}: {err}"
        );
    }
    // Just inside the hold: 150 + 30 + 60 + 59.999 s < 300 s.
    let cli = Cli::try_parse_from([
        "holdfast",
        "--reconcile-after-ms=150000",
        "--processor-timeout-ms=60000",
        "--db-completion-wait-ms=59999",
        "serve",
    ])
    .unwrap();
    cli.database.check_against(&cli.payments).unwrap();
}

/// `holdfast --help` leads with the commands; the many settings follow, grouped by what they
/// set, after the few options every command reads.
#[test]
fn help_leads_with_the_commands_and_groups_the_settings() {
    let help = Cli::command().render_help().to_string();
    let at = |heading: &str| {
        help.find(&format!("\n{heading}:\n"))
            .unwrap_or_else(|| panic!("no {heading} section:\n{help}"))
    };
    let order = [
        at("Commands"),
        at("Options"),
        at("Database"),
        at("Logs"),
        at("Payments and wallets"),
        at("Vault"),
        at("Webhooks, workers and email"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{help}");
    let options = &help[order[1]..order[2]];
    assert!(
        options.contains("--public-url") && options.contains("--json"),
        "{options}"
    );
    assert!(!options.contains("--database-url"), "{options}");
}
