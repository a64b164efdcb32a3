//! The `/demo` checkout's set-up: a merchant of the demo platform in test mode, and two keys
//! of its own that the page and its "backend" use exactly as a merchant's would. Keys are kept
//! only as hashes, so the demo's are made afresh at every start (the previous ones deleted),
//! and their values live in this process's memory only.

use holdfast_domain::api_key::{KeyEvent, KeyName, KeyValue};
use holdfast_domain::auth::{Access, Principal};
use holdfast_domain::ids::MerchantId;
use holdfast_domain::merchant::{Currency, MerchantDetails, MerchantName};
use holdfast_domain::mode::{KeyType, Mode};
use holdfast_domain::page::PageRequest;
use holdfast_domain::services::ServiceError;

const PLATFORM_NAME: &str = "Demo Platform";
const MERCHANT_NAME: &str = "Demo Shop";
const PUBLIC_KEY_NAME: &str = "Demo page (public)";
const PRIVATE_KEY_NAME: &str = "Demo page (private)";
/// What the demo checkout charges, in cents.
pub const AMOUNT: i64 = 2500;

/// What the demo door holds: the page's public key and its backend's private key.
pub struct Demo {
    /// For the script tag, as a merchant page would have it.
    pub public_key: String,
    /// The demo's private key, as the merchant's server holds it: authenticated on every
    /// visit, so that deactivating or deleting it stops the demo at once (spec 3.1).
    pub private_key: KeyValue,
    /// Who that key was at start-up: its rate is spent before the key is read again, so a
    /// request refused 429 costs no database read.
    pub backend: Principal,
    /// The merchant the checkout pays.
    pub merchant: MerchantId,
}

impl std::fmt::Debug for Demo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Demo")
            .field("merchant", &self.merchant)
            .finish_non_exhaustive()
    }
}

/// The demo, or `None` when the database has no demo platform (`serve` made one on its first
/// start with an empty database; a database that had platforms already has none).
pub async fn prepare(state: &holdfast_web::Services) -> anyhow::Result<Option<Demo>> {
    let platforms = state.platforms.list().await?;
    let Some(platform) = platforms
        .into_iter()
        .find(|p| p.name.as_str() == PLATFORM_NAME)
    else {
        return Ok(None);
    };
    // The demo's keys are the operator's doing: `serve` replaces them on every start.
    let operator = holdfast_domain::audit::Actor::operator();
    for key in state.keys.list(&platform.id).await? {
        if [PUBLIC_KEY_NAME, PRIVATE_KEY_NAME].contains(&key.name.as_str()) {
            state
                .keys
                .apply(&operator, &platform.id, &key.id, KeyEvent::Delete)
                .await?;
        }
    }
    #[expect(clippy::expect_used, reason = "constant names within their rules")]
    let generate = async |name: &str, key_type: KeyType| {
        state
            .keys
            .generate(
                &operator,
                &platform.id,
                &platform.owner_id,
                KeyName::parse(name).expect("a valid name"),
                key_type,
                Mode::Test,
            )
            .await
    };
    let public = generate(PUBLIC_KEY_NAME, KeyType::Public).await?;
    let private = generate(PRIVATE_KEY_NAME, KeyType::Private).await?;
    let backend = state
        .auth
        .authenticate(Some(private.value.expose()), Access::Private)
        .await
        .map_err(|e| anyhow::anyhow!("the demo's own key does not authenticate: {e}"))?;
    let merchant = demo_merchant(state, &backend).await?;
    Ok(Some(Demo {
        public_key: public.value.expose().to_owned(),
        private_key: private.value,
        backend,
        merchant,
    }))
}

async fn demo_merchant(
    state: &holdfast_web::Services,
    backend: &Principal,
) -> Result<MerchantId, ServiceError> {
    let page = PageRequest::new(Some(100), None)?;
    let existing = state.merchants.list(backend, &page).await?;
    if let Some(merchant) = existing
        .data
        .into_iter()
        .find(|m| m.details.name.as_str() == MERCHANT_NAME)
    {
        return Ok(merchant.id);
    }
    let details = MerchantDetails {
        name: MerchantName::parse(MERCHANT_NAME)?,
        currency: Currency::USD,
        email: None,
        metadata: holdfast_domain::metadata::Metadata::default(),
    };
    Ok(state.merchants.create(backend, details, None).await?.id)
}
