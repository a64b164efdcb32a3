//! Holdfast's domain embedded in another Rust program: the services over the real SQLite
//! adapter and the sandbox processor, a platform, a merchant, an auth and its capture, with no
//! HTTP anywhere. The services are the same ones behind every door of the `holdfast` binary.
//!
//! ```text
//! cargo run -p holdfast-persistence --example embed
//! ```

// An example reports to the person running it.
#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use holdfast_domain::audit::Actor;
use holdfast_domain::auth::Access;
use holdfast_domain::merchant::{Currency, MerchantDetails, MerchantName};
use holdfast_domain::payment::amount::Amount;
use holdfast_domain::payment::card::CardInput;
use holdfast_domain::payment::lifecycle::{FollowUp, TxnState, TxnType};
use holdfast_domain::platform::PlatformName;
use holdfast_domain::ports::{BinLookup, Clock, Ids};
use holdfast_domain::services::{
    Auditor, Authenticator, MerchantService, NewPayment, PaymentService, PaymentSource,
    PlatformService, TokenService,
};
use holdfast_domain::user::Email;
use holdfast_persistence::{Database, DatabaseUrl, PoolOptions};
use holdfast_processors::{BinTable, Processors};
use holdfast_vault::{AesGcmVault, VaultKey};
use time::OffsetDateTime;

/// The wall clock, at the microsecond both databases keep.
struct WallClock;

impl Clock for WallClock {
    fn now(&self) -> OffsetDateTime {
        let now = OffsetDateTime::now_utc();
        now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
            .expect("in range")
    }
}

/// Ids that sort by creation: the time, then a counter. An embedding program brings its own
/// (the binary uses ULIDs and a CSPRNG for key secrets).
struct SequentialIds(AtomicU64);

impl Ids for SequentialIds {
    fn next_id(&self) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        format!(
            "{:016X}{n:010}",
            OffsetDateTime::now_utc().unix_timestamp_nanos() >> 20
        )
    }

    fn key_secret(&self) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        format!("EXAMPLExSECRETx{n:011}")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("holdfast-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let url = DatabaseUrl::parse(&format!("sqlite://{}", dir.join("holdfast.db").display()))?;
    Database::migrate(&url).await?;
    let stores = Database::open(&url, PoolOptions::default())?.stores();

    let clock: Arc<dyn Clock> = Arc::new(WallClock);
    let ids: Arc<dyn Ids> = Arc::new(SequentialIds(AtomicU64::new(0)));
    let vault = AesGcmVault::new(
        VaultKey::from_base64("example", &VaultKey::generate_base64())?,
        Vec::new(),
    );
    let audit = Auditor::new(stores.audit, clock.clone(), ids.clone());
    let platforms = PlatformService::new(stores.platforms, clock.clone(), ids.clone(), audit);
    let auth = Authenticator::new(stores.keys, clock.clone());
    let merchants = MerchantService::new(
        stores.merchants,
        stores.routing.clone(),
        clock.clone(),
        ids.clone(),
    );
    let bins: Arc<dyn BinLookup> = Arc::new(BinTable::shipped());
    let tokens = TokenService::new(
        stores.tokens,
        stores.client_sessions,
        Arc::new(NoWallets),
        Arc::new(vault),
        bins.clone(),
        clock.clone(),
        ids.clone(),
    );
    let payments = PaymentService::new(
        stores.transactions,
        stores.routing,
        Arc::new(Processors::new(Duration::from_secs(5))),
        bins,
        clock,
        ids,
        tokens,
    );

    // A platform starts with its owner, two test keys, and a sandbox plan.
    let created = platforms
        .create(
            &Actor::operator(),
            PlatformName::parse("Embedded")?,
            Email::parse("owner@example.com")?,
        )
        .await?;
    let private_key = created.keys[0].value.expose();
    let who = auth
        .authenticate(Some(private_key), Access::Private)
        .await?;

    let merchant = merchants
        .create(
            &who,
            MerchantDetails {
                name: MerchantName::parse("Corner Shop")?,
                currency: Currency::USD,
                email: None,
                metadata: holdfast_domain::metadata::Metadata::default(),
            },
            None,
        )
        .await?;
    let auth_txn = payments
        .pay(
            &who,
            NewPayment {
                merchant_id: merchant.id.clone(),
                kind: TxnType::Auth,
                amount: Amount::new("amount", 2_500)?,
                source: PaymentSource::Card(CardInput {
                    number: Some("4111111111111111".into()),
                    cvv: Some("123".into()),
                    expiration: Some("1230".into()),
                    name: None,
                }),
                labels: holdfast_domain::payment::labels::Labels::default(),
            },
            None,
        )
        .await?;
    let capture = payments
        .follow_up(&who, &auth_txn.id, FollowUp::Capture(None), None)
        .await?;
    let auth_now = payments.get(&who, &auth_txn.id).await?.ok_or("auth gone")?;

    println!(
        "auth {} {:?} for {} (fee {}), capture {} {:?} (fee {}); the auth is now {:?}",
        auth_txn.id,
        auth_txn.authorization.status,
        auth_txn.amount,
        auth_txn.fee,
        capture.id,
        capture.state,
        capture.fee,
        auth_now.state,
    );
    std::fs::remove_dir_all(&dir)?;
    if auth_now.state != TxnState::Captured || capture.state != TxnState::Settled {
        return Err("the capture did not settle the auth".into());
    }
    Ok(())
}

/// This service takes no wallet tokens.
struct NoWallets;

impl holdfast_domain::ports::WalletOpener for NoWallets {
    fn open(
        &self,
        kind: holdfast_domain::payment::wallet::WalletKind,
        _: holdfast_domain::mode::Mode,
        _: &str,
        _: time::OffsetDateTime,
    ) -> Result<
        holdfast_domain::payment::wallet::WalletCard,
        holdfast_domain::payment::wallet::WalletRefusal,
    > {
        Err(holdfast_domain::payment::wallet::WalletRefusal::NotConfigured(kind))
    }
}
