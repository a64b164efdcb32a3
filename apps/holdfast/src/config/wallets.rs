//! The wallets' keys (docs/hosted-fields.md, "Wallets").

use clap::Args;

/// The wallets' keys (docs/hosted-fields.md, "Wallets"). A wallet with no keys for a mode is
/// refused there as not set up.
#[derive(Clone, Default, Args)]
pub struct WalletArgs {
    /// Google Pay: our gateway private key (P-256), base64 of its PKCS#8 DER. Google encrypts
    /// every token for gateway `holdfast` to its public half.
    #[arg(
        long,
        env = "HOLDFAST_GOOGLE_PAY_PRIVATE_KEY",
        global = true,
        hide_env_values = true
    )]
    pub google_pay_private_key: Option<String>,

    /// Google's `ECv2` root signing keys for test-mode tokens (Google's `TEST` environment),
    /// base64 of each key's DER, comma-separated.
    #[arg(
        long,
        env = "HOLDFAST_GOOGLE_PAY_TEST_ROOT_KEYS",
        global = true,
        value_delimiter = ','
    )]
    pub google_pay_test_root_keys: Vec<String>,

    /// Google's `ECv2` root signing keys for live-mode tokens (`PRODUCTION`), as above.
    #[arg(
        long,
        env = "HOLDFAST_GOOGLE_PAY_LIVE_ROOT_KEYS",
        global = true,
        value_delimiter = ','
    )]
    pub google_pay_live_root_keys: Vec<String>,

    /// Apple Pay: the payment processing certificate's private key (P-256), base64 of its
    /// PKCS#8 DER. Used for both modes.
    #[arg(
        long,
        env = "HOLDFAST_APPLE_PAY_PROCESSING_KEY",
        global = true,
        hide_env_values = true
    )]
    pub apple_pay_processing_key: Option<String>,

    /// Apple Pay: the merchant identifier (`merchant.com.example`) the tokens are for.
    #[arg(long, env = "HOLDFAST_APPLE_PAY_MERCHANT_ID", global = true)]
    pub apple_pay_merchant_id: Option<String>,

    /// Apple Pay: Apple Root CA - G3, base64 of its DER, the root every token's signature
    /// must chain to.
    #[arg(long, env = "HOLDFAST_APPLE_PAY_ROOT_CERT", global = true)]
    pub apple_pay_root_cert: Option<String>,

    /// Apple Pay: the domain association file Apple gave for the domain Holdfast serves pages
    /// on, served at `/.well-known/apple-developer-merchantid-domain-association`.
    #[arg(long, env = "HOLDFAST_APPLE_PAY_DOMAIN_ASSOCIATION", global = true)]
    pub apple_pay_domain_association: Option<std::path::PathBuf>,

    /// Apple Pay: the merchant identity certificate (PEM file, optionally followed by its
    /// chain) presented to Apple's gateway for merchant validation. With its key, merchant
    /// validation asks Apple in both modes; without, test mode gets sandbox sessions.
    #[arg(long, env = "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT", global = true)]
    pub apple_pay_merchant_identity_cert: Option<std::path::PathBuf>,

    /// Apple Pay: the merchant identity certificate's private key (PEM file).
    #[arg(long, env = "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_KEY", global = true)]
    pub apple_pay_merchant_identity_key: Option<std::path::PathBuf>,
}

/// The private key never reaches a log line.
impl std::fmt::Debug for WalletArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalletArgs")
            .field(
                "google_pay_private_key",
                &self.google_pay_private_key.as_ref().map(|_| "…"),
            )
            .field(
                "google_pay_test_root_keys",
                &self.google_pay_test_root_keys.len(),
            )
            .field(
                "google_pay_live_root_keys",
                &self.google_pay_live_root_keys.len(),
            )
            .field(
                "apple_pay_processing_key",
                &self.apple_pay_processing_key.as_ref().map(|_| "…"),
            )
            .field("apple_pay_merchant_id", &self.apple_pay_merchant_id)
            .field("apple_pay_root_cert", &self.apple_pay_root_cert.is_some())
            .field(
                "apple_pay_domain_association",
                &self.apple_pay_domain_association,
            )
            .field(
                "apple_pay_merchant_identity_cert",
                &self.apple_pay_merchant_identity_cert,
            )
            .field(
                "apple_pay_merchant_identity_key",
                &self.apple_pay_merchant_identity_key,
            )
            .finish()
    }
}

impl WalletArgs {
    /// Each wallet's keys per mode; a key that does not parse stops start-up with its variable.
    pub fn wallets(&self) -> anyhow::Result<holdfast_wallets::Wallets> {
        let google_pay = |roots: &[String], variable: &str| -> anyhow::Result<_> {
            if roots.is_empty() {
                return Ok(None);
            }
            let private = self.google_pay_private_key.as_deref().ok_or_else(|| {
                anyhow::anyhow!("{variable} is set but HOLDFAST_GOOGLE_PAY_PRIVATE_KEY is not")
            })?;
            let roots: Vec<&str> = roots.iter().map(String::as_str).collect();
            holdfast_wallets::google_pay::GooglePayKeys::from_base64(private, &roots)
                .map(Some)
                .map_err(|e| anyhow::anyhow!("HOLDFAST_GOOGLE_PAY_PRIVATE_KEY or {variable}: {e}"))
        };
        Ok(holdfast_wallets::Wallets {
            google_pay_test: google_pay(
                &self.google_pay_test_root_keys,
                "HOLDFAST_GOOGLE_PAY_TEST_ROOT_KEYS",
            )?,
            google_pay_live: google_pay(
                &self.google_pay_live_root_keys,
                "HOLDFAST_GOOGLE_PAY_LIVE_ROOT_KEYS",
            )?,
            apple_pay: self.apple_pay()?,
        })
    }

    /// The domain association file's bytes, read once at start-up.
    pub fn apple_pay_domain_association(&self) -> anyhow::Result<Option<Vec<u8>>> {
        self.apple_pay_domain_association
            .as_ref()
            .map(|path| {
                std::fs::read(path).map_err(|e| {
                    anyhow::anyhow!(
                        "HOLDFAST_APPLE_PAY_DOMAIN_ASSOCIATION {}: {e}",
                        path.display()
                    )
                })
            })
            .transpose()
    }

    /// Apple's gateway for merchant validation: the identity certificate and key together, with
    /// the merchant identifier; none of them for sandbox sessions in test mode only.
    pub fn apple_pay_gateway(
        &self,
    ) -> anyhow::Result<Option<holdfast_outbound_http::AppleGateway>> {
        let (cert, key) = match (
            &self.apple_pay_merchant_identity_cert,
            &self.apple_pay_merchant_identity_key,
        ) {
            (None, None) => return Ok(None),
            (Some(cert), Some(key)) => (cert, key),
            _ => anyhow::bail!(
                "Apple Pay merchant validation needs HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT and \
                 HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_KEY together"
            ),
        };
        let merchant = self.apple_pay_merchant_id.as_deref().ok_or_else(|| {
            anyhow::anyhow!(
                "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT is set but HOLDFAST_APPLE_PAY_MERCHANT_ID is not"
            )
        })?;
        let read = |path: &std::path::Path, variable: &str| {
            std::fs::read(path).map_err(|e| anyhow::anyhow!("{variable} {}: {e}", path.display()))
        };
        let identity = holdfast_outbound_http::MerchantIdentity::from_pem(
            &read(cert, "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT")?,
            &read(key, "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_KEY")?,
            merchant,
        )
        .map_err(|e| anyhow::anyhow!("HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_*: {e}"))?;
        holdfast_outbound_http::AppleGateway::new(
            identity,
            holdfast_outbound_http::AppleGatewayConfig::default(),
        )
        .map(Some)
        .map_err(|e| anyhow::anyhow!("HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_*: {e}"))
    }

    /// Apple Pay's keys: all three settings, or none.
    fn apple_pay(&self) -> anyhow::Result<Option<holdfast_wallets::apple_pay::ApplePayKeys>> {
        match (
            &self.apple_pay_processing_key,
            &self.apple_pay_merchant_id,
            &self.apple_pay_root_cert,
        ) {
            (None, None, None) => Ok(None),
            (Some(key), Some(merchant), Some(root)) => {
                holdfast_wallets::apple_pay::ApplePayKeys::from_base64(key, merchant, root)
                    .map(Some)
                    .map_err(|e| anyhow::anyhow!("HOLDFAST_APPLE_PAY_*: {e}"))
            }
            _ => anyhow::bail!(
                "Apple Pay needs HOLDFAST_APPLE_PAY_PROCESSING_KEY, HOLDFAST_APPLE_PAY_MERCHANT_ID \
                 and HOLDFAST_APPLE_PAY_ROOT_CERT together"
            ),
        }
    }
}
