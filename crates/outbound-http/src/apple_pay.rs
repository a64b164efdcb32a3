//! `AppleGateway`, the `ApplePayGateway` adapter: Apple Pay merchant validation, one POST to
//! Apple's gateway over mutual TLS with the merchant identity certificate.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use holdfast_domain::payment::wallet::{GatewayFailure, MerchantValidation};
use holdfast_domain::ports::{ApplePayGateway, SendFailure};
use http_body_util::Full;
use hyper::header::{CONTENT_TYPE, USER_AGENT};
use hyper::{Request, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::body::read_capped;
use crate::connector::{Connector, Schemes, guarded, pooled_client, tls_trusting};
use crate::guard::AddressGuard;

/// A merchant session is a few hundred bytes; anything past this is not one.
const MAX_SESSION_BYTES: usize = 16 * 1024;

/// The merchant identity certificate (with its chain) and its private key, and the merchant
/// identifier they were issued for.
pub struct MerchantIdentity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    merchant_identifier: String,
}

/// The key never reaches a log line.
impl fmt::Debug for MerchantIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MerchantIdentity")
            .field("certificates", &self.chain.len())
            .field("merchant_identifier", &self.merchant_identifier)
            .finish_non_exhaustive()
    }
}

/// Why a gateway client could not be built. The messages never quote the key.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("the certificate file holds no PEM certificate")]
    NoCertificate,
    #[error("the certificate file is not PEM: {0}")]
    Certificate(String),
    #[error("the key file holds no PEM private key (PKCS#8, PKCS#1 or SEC1)")]
    Key,
    #[error("the certificate and key are not usable for TLS client authentication: {0}")]
    Tls(#[from] rustls::Error),
}

impl MerchantIdentity {
    /// The identity from the PEM files Apple's developer portal process gives: the certificate
    /// (converted from Apple's `.cer`, optionally followed by its chain) and its private key.
    pub fn from_pem(
        certificate_pem: &[u8],
        key_pem: &[u8],
        merchant_identifier: &str,
    ) -> Result<Self, IdentityError> {
        let chain = CertificateDer::pem_slice_iter(certificate_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| IdentityError::Certificate(e.to_string()))?;
        if chain.is_empty() {
            return Err(IdentityError::NoCertificate);
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|_| IdentityError::Key)?;
        Ok(Self {
            chain,
            key,
            merchant_identifier: merchant_identifier.to_owned(),
        })
    }
}

/// How the gateway client connects.
#[derive(Debug, Clone, Copy)]
pub struct AppleGatewayConfig {
    /// The whole exchange, from DNS to the last byte. Apple's sheet gives up on its own after 30
    /// seconds, so an answer later than that is no use.
    pub timeout: Duration,
}

impl Default for AppleGatewayConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
        }
    }
}

/// Asks Apple's gateway for merchant sessions, presenting the merchant identity certificate.
pub struct AppleGateway {
    client: Client<Connector, Full<Bytes>>,
    merchant_identifier: String,
    timeout: Duration,
}

impl fmt::Debug for AppleGateway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppleGateway")
            .field("merchant_identifier", &self.merchant_identifier)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Where the client connects, and whom it trusts: Apple's hosts as DNS has them, public
/// addresses only, the webpki roots. Tests stand in for Apple with their own.
#[derive(Debug, Default)]
struct Reach {
    extra_roots: Vec<CertificateDer<'static>>,
    pinned: Option<SocketAddr>,
    allow: Vec<ipnet::IpNet>,
}

impl AppleGateway {
    pub fn new(
        identity: MerchantIdentity,
        config: AppleGatewayConfig,
    ) -> Result<Self, IdentityError> {
        Self::reaching(identity, config, Reach::default())
    }

    fn reaching(
        identity: MerchantIdentity,
        config: AppleGatewayConfig,
        reach: Reach,
    ) -> Result<Self, IdentityError> {
        let tls =
            tls_trusting(reach.extra_roots)?.with_client_auth_cert(identity.chain, identity.key)?;
        let guard = Arc::new(AddressGuard::new(reach.allow));
        let connector = guarded(guard, reach.pinned, tls, Schemes::HttpsOnly);
        Ok(Self {
            client: pooled_client(connector),
            merchant_identifier: identity.merchant_identifier,
            timeout: config.timeout,
        })
    }

    async fn exchange(&self, request: Request<Full<Bytes>>) -> Result<String, GatewayFailure> {
        let response = self.client.request(request).await.map_err(|e| {
            let failure = crate::sender::failure(&e);
            tracing::warn!(error = %failure, "Apple Pay merchant validation: no answer");
            GatewayFailure(match failure {
                SendFailure::Refused(_) => {
                    "Apple Pay's gateway resolves to an address that is not public".to_owned()
                }
                _ => "Apple Pay's gateway could not be reached".to_owned(),
            })
        })?;
        let status = response.status();
        let body = read_capped(response.into_body(), MAX_SESSION_BYTES)
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "Apple Pay merchant validation: the answer broke off");
                GatewayFailure("Apple Pay's gateway answer broke off".to_owned())
            })?;
        if status != StatusCode::OK {
            // Apple's `statusMessage` says why (a domain not registered, a certificate
            // revoked): the operator's to read, in the log.
            tracing::warn!(status = status.as_u16(), answer = %body, "Apple Pay merchant validation refused");
            return Err(GatewayFailure(format!(
                "Apple Pay's gateway refused the merchant validation (it answered {})",
                status.as_u16()
            )));
        }
        let is_session = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&body)
            .is_ok_and(|session| session.contains_key("merchantSessionIdentifier"));
        if !is_session {
            tracing::warn!("Apple Pay merchant validation: the answer is not a merchant session");
            return Err(GatewayFailure(
                "Apple Pay's gateway answered something other than a merchant session".to_owned(),
            ));
        }
        Ok(body)
    }
}

#[async_trait]
impl ApplePayGateway for AppleGateway {
    async fn start_session(&self, asked: &MerchantValidation) -> Result<String, GatewayFailure> {
        let uri: Uri = asked
            .validation_url
            .parse()
            .map_err(|_| GatewayFailure("the validation URL is not usable".to_owned()))?;
        let body = serde_json::json!({
            "merchantIdentifier": self.merchant_identifier,
            "displayName": asked.display_name,
            "initiative": "web",
            "initiativeContext": asked.domain,
        });
        let request = Request::post(uri)
            .header(CONTENT_TYPE, "application/json")
            .header(USER_AGENT, concat!("Holdfast/", env!("CARGO_PKG_VERSION")))
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|_| GatewayFailure("the validation request could not be built".to_owned()))?;
        tokio::time::timeout(self.timeout, self.exchange(request))
            .await
            .unwrap_or_else(|_| {
                Err(GatewayFailure(
                    "Apple Pay's gateway did not answer in time".to_owned(),
                ))
            })
    }
}

#[cfg(test)]
mod tests;
