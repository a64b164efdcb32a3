//! `AdyenConnector`: one processor call as one (or, when the shopper would have to act, two)
//! HTTP calls to the connection's Checkout API, read through the domain's mapping table.

use std::sync::Arc;

use holdfast_domain::payment::adyen::answers::{
    self, ResultKind, http_error, modification_received, payment_reply,
};
use holdfast_domain::payment::adyen::{AdyenAccount, Secret};
use holdfast_domain::payment::decline::DeclineCode;
use holdfast_domain::payment::transaction::{AvsCode, CvvCode};
use holdfast_domain::ports::{
    CardVault, ProcessorError, ProcessorOp, ProcessorReply, ProcessorRequest,
};
use holdfast_outbound_http::{ApiAnswer, ApiClient, ApiClientConfig, ApiFailure, BuildError};

use crate::wire::{self, Call, call_for, cancel_by_reference};

/// How the connector reaches Adyen.
#[derive(Debug, Clone, Default)]
pub struct AdyenConfig {
    /// Where a shopper would return after a redirect: required by Adyen on every payment,
    /// never used while 3-D Secure is refused (Holdfast's public URL).
    pub return_url: String,
    /// Loopback Checkout URLs over plain HTTP, for a test's stand-in Adyen
    /// (`HOLDFAST_ADYEN_ALLOW_LOOPBACK`; the connection's URL rules allow them only then too).
    pub allow_loopback: bool,
}

/// Calls Adyen for connections of kind `adyen`, opening each connection's API key with the
/// vault for the call.
pub struct AdyenConnector {
    client: ApiClient,
    vault: Arc<dyn CardVault>,
    return_url: String,
}

impl std::fmt::Debug for AdyenConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdyenConnector")
            .field("return_url", &self.return_url)
            .finish_non_exhaustive()
    }
}

impl AdyenConnector {
    pub fn new(config: AdyenConfig, vault: Arc<dyn CardVault>) -> Result<Self, BuildError> {
        Ok(Self {
            client: ApiClient::new(&ApiClientConfig {
                allow_loopback: config.allow_loopback,
            })?,
            vault,
            return_url: config.return_url,
        })
    }

    /// Carries out `request` on the Adyen account of connection `connection_id`.
    pub async fn call(
        &self,
        connection_id: &str,
        account: &AdyenAccount,
        request: &ProcessorRequest,
    ) -> Result<ProcessorReply, ProcessorError> {
        let api_key = account
            .api_key(connection_id, self.vault.as_ref())
            .map_err(|e| {
                tracing::error!(error = %e, "the connection's Adyen API key does not open");
                ProcessorError::Unavailable(
                    "the connection's secrets do not open with this server's vault keys".to_owned(),
                )
            })?;
        let call = call_for(account, request, &self.return_url).ok_or_else(|| {
            ProcessorError::Unavailable(
                "the original's Adyen PSP reference is not one Adyen gives".to_owned(),
            )
        })?;
        let answer = self.send(account, &api_key, &call).await?;
        if call.is_payment {
            self.read_payment(account, &api_key, request, &answer).await
        } else {
            read_modification(request, &answer)
        }
    }

    async fn send(
        &self,
        account: &AdyenAccount,
        api_key: &Secret,
        call: &Call,
    ) -> Result<ApiAnswer, ProcessorError> {
        let url = format!("{}{}", account.checkout_url, call.path);
        let headers = [
            ("x-api-key", api_key.expose()),
            ("idempotency-key", call.idempotency_key.as_str()),
        ];
        self.client
            .post_json(&url, &headers, call.body.clone())
            .await
            .map_err(|failure| match failure {
                ApiFailure::NotSent(why) => {
                    tracing::warn!(path = %call.path, %why, "Adyen not reached");
                    ProcessorError::Unavailable(format!("Adyen could not be reached: {why}"))
                }
                // Adyen may have acted: the caller undoes it by our reference.
                ApiFailure::NoAnswer(why) => {
                    tracing::warn!(path = %call.path, %why, "Adyen's answer never came");
                    ProcessorError::Timeout
                }
            })
    }

    async fn read_payment(
        &self,
        account: &AdyenAccount,
        api_key: &Secret,
        request: &ProcessorRequest,
        answer: &ApiAnswer,
    ) -> Result<ProcessorReply, ProcessorError> {
        if answer.status != 200 {
            return Err(refused(answer));
        }
        // A 200 that is not a payment's answer may follow a payment made: undone by reference.
        let result = wire::payment_result(&answer.body).ok_or_else(|| {
            tracing::warn!("Adyen answered 200 with something other than a payment");
            ProcessorError::Timeout
        })?;
        match payment_reply(&result, request.amount) {
            Ok(reply) => Ok(reply),
            Err(ResultKind::NeedsShopper) => {
                // Nothing is authorised while the shopper is asked to act, and nothing must be
                // left waiting on them either.
                let cancel = cancel_by_reference(account, request.reference.as_str());
                if let Err(e) = self.send(account, api_key, &cancel).await {
                    tracing::warn!(error = %e, "the cancel of a payment awaiting 3-D Secure failed");
                }
                Ok(needs_shopper(&result.result_code, result.psp_reference))
            }
            Err(ResultKind::Error) => Err(ProcessorError::Unavailable(format!(
                "Adyen could not process the payment (resultCode Error{})",
                result
                    .refusal_reason_code
                    .map(|code| format!(", refusal {}", digits(&code)))
                    .unwrap_or_default()
            ))),
            // No final outcome yet: the caller cancels it by our reference.
            Err(_) => Err(ProcessorError::Timeout),
        }
    }
}

fn read_modification(
    request: &ProcessorRequest,
    answer: &ApiAnswer,
) -> Result<ProcessorReply, ProcessorError> {
    if answer.status != 201 && answer.status != 200 {
        return Err(refused(answer));
    }
    let (payment_psp, own_psp) = wire::received(&answer.body).ok_or_else(|| {
        tracing::warn!("Adyen's answer to a modification is not `received`");
        ProcessorError::Timeout
    })?;
    let amount = match request.op {
        ProcessorOp::Void { .. } | ProcessorOp::Reverse => 0,
        _ => request.amount,
    };
    Ok(modification_received(payment_psp, &own_psp, amount))
}

/// An error status, logged with what Adyen said, read through the mapping table.
fn refused(answer: &ApiAnswer) -> ProcessorError {
    let error = wire::service_error(&answer.body);
    tracing::warn!(
        status = answer.status,
        error_code = error.error_code.as_deref().unwrap_or(""),
        error_type = error.error_type.as_deref().unwrap_or(""),
        message = error.message.as_deref().unwrap_or(""),
        "Adyen refused the call"
    );
    http_error(
        answer.status,
        error.error_code.as_deref(),
        error.error_type.as_deref(),
    )
}

/// 3-D Secure is not supported yet: the card's issuer asked for the shopper, so the payment is
/// declined as `authentication_required`.
fn needs_shopper(result_code: &str, psp_reference: Option<String>) -> ProcessorReply {
    ProcessorReply {
        approved: false,
        approved_amount: 0,
        avs: AvsCode::Unavailable,
        cvv: CvvCode::NotProcessed,
        code: answers::result_code_word(result_code).to_owned(),
        decline: Some(DeclineCode::AuthenticationRequired),
        message: "Adyen asked for the shopper's authentication (3-D Secure), which Holdfast does not support yet; the payment was cancelled".to_owned(),
        processor_transaction_id: psp_reference.unwrap_or_default(),
        submitted: false,
    }
}

fn digits(text: &str) -> String {
    text.chars().filter(char::is_ascii_digit).take(4).collect()
}
