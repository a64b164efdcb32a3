//! A transaction as a client asks for it, run under the request's idempotency key: the whole
//! flow the HTTP door used to steer, as one call whose answer says whether the key is settled.
//!
//! A card payment claims its key with its pending row, in the same statement: one round trip
//! and one commit fewer than a claim of its own. A request that cannot claim that way (the key
//! is taken, or the request writes before its pending row: a token's redemption, a follow-up's
//! reservation) claims the key the ordinary way and runs again. Whether the key was claimed is
//! a value the payment returns (`Charged`), never a flag shared with the store.

use crate::auth::Principal;
use crate::idempotency::{Answer, IdempotencyKey, KeyClaim, Recorder, Seen};
use crate::ids::TxnId;
use crate::payment::labels::Labels;
use crate::payment::lifecycle::FollowUp;
use crate::payment::transaction::Transaction;
use crate::ports::Begun;
use crate::services::IdempotencyService;

use super::{NewPayment, PaymentError, PaymentService};

/// A transaction a client asks for, parsed.
#[derive(Debug, Clone)]
pub enum TransactionRequest {
    /// An auth or a sale.
    Payment(NewPayment),
    /// A capture, void or refund of `original`.
    FollowUp {
        /// The transaction followed up.
        original: TxnId,
        /// What is asked of it.
        follow_up: FollowUp,
        /// The merchant's reference and metadata for it.
        labels: Labels,
    },
}

/// The request's idempotency key, as the door found it.
#[derive(Debug, Clone)]
pub enum RequestKey {
    /// No key: nothing is stored for a retry.
    None,
    /// A key the payment's first write is to claim (`claims_own_key` routes).
    AtFirstWrite(KeyClaim),
}

/// How the door renders what a request came to, for the answer stored under its key: the
/// very bytes a retry is replayed.
pub struct Renders<'a> {
    /// A recorded transaction's answer (approved, declined, failed: each carries it).
    pub made: &'a (dyn Fn(&Transaction) -> Answer + Sync),
    /// A refusal's answer.
    pub refused: &'a (dyn Fn(&PaymentError) -> Answer + Sync),
}

impl std::fmt::Debug for Renders<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renders").finish_non_exhaustive()
    }
}

/// What a transaction request came to.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per request, moved once to the door that renders it"
)]
pub enum Created {
    /// It ran.
    Ran {
        /// Its transaction (approved or not: a recorded outcome) or its refusal.
        result: Result<Transaction, PaymentError>,
        /// Its answer is stored under its key (or the key released); otherwise the door
        /// settles the key as for any request.
        key_settled: bool,
    },
    /// An earlier request holds the key: its answer, or a conflict.
    Seen(Seen),
}

/// A payment's result, and whether its first write claimed the request's key: from then on
/// the key is the request's to settle.
#[derive(Debug)]
pub(crate) struct Charged {
    pub(crate) result: Result<Transaction, PaymentError>,
    pub(crate) key_claimed: bool,
}

impl Charged {
    /// Refused before any write: the key not claimed.
    pub(crate) fn refused(err: impl Into<PaymentError>) -> Self {
        Self {
            result: Err(err.into()),
            key_claimed: false,
        }
    }
}

/// Transactions as clients ask for them, under their idempotency keys.
#[derive(Clone)]
pub struct TransactionRequests {
    payments: PaymentService,
    keys: IdempotencyService,
}

impl std::fmt::Debug for TransactionRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransactionRequests")
            .finish_non_exhaustive()
    }
}

impl TransactionRequests {
    /// Requests over `payments`, their keys kept by `keys`.
    pub fn new(payments: PaymentService, keys: IdempotencyService) -> Self {
        Self { payments, keys }
    }

    /// Runs `request` for `who` under `key`, to its end: the transaction (or refusal) and,
    /// under a key, its answer stored with it or the key settled with the refusal.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        request: TransactionRequest,
        key: RequestKey,
        renders: &Renders<'_>,
    ) -> Created {
        let claim = match key {
            RequestKey::None => {
                let charged = self.run(who, request, None).await;
                return Created::Ran {
                    result: charged.result,
                    key_settled: false,
                };
            }
            RequestKey::AtFirstWrite(claim) => claim,
        };
        let first_write = Recorder {
            key: &claim.key,
            render: renders.made,
            claim_at_first_write: Some(&claim),
        };
        let charged = self.run(who, request.clone(), Some(&first_write)).await;
        match charged {
            Charged {
                result: Err(PaymentError::KeyNotClaimed),
                ..
            } => match self.keys.begin(who, &claim).await {
                // The key was free after all (a stale claim replaced), or the request writes
                // before its pending row: it runs as claimed.
                Ok(Begun::Started) => self.run_claimed(who, request, &claim.key, renders).await,
                Ok(Begun::Seen(seen)) => Created::Seen(seen),
                Err(store) => Created::Ran {
                    result: Err(store.into()),
                    key_settled: true,
                },
            },
            Charged {
                result,
                key_claimed: true,
            } => {
                self.settle_refusal(who, &claim.key, &result, renders).await;
                Created::Ran {
                    result,
                    key_settled: true,
                }
            }
            // Refused before the pending row: nothing written, the key not claimed.
            Charged {
                result,
                key_claimed: false,
            } => Created::Ran {
                result,
                key_settled: false,
            },
        }
    }

    /// The request under `key`, claimed before it ran.
    async fn run_claimed(
        &self,
        who: &Principal,
        request: TransactionRequest,
        key: &IdempotencyKey,
        renders: &Renders<'_>,
    ) -> Created {
        let recorder = Recorder {
            key,
            render: renders.made,
            claim_at_first_write: None,
        };
        let result = self.run(who, request, Some(&recorder)).await.result;
        self.settle_refusal(who, key, &result, renders).await;
        Created::Ran {
            result,
            key_settled: true,
        }
    }

    async fn run(
        &self,
        who: &Principal,
        request: TransactionRequest,
        recorder: Option<&Recorder<'_>>,
    ) -> Charged {
        match request {
            TransactionRequest::Payment(new) => self.payments.charge_for(who, new, recorder).await,
            // A follow-up's first write is its reservation, which claims no key: under a key
            // not yet claimed it is refused with nothing written (`KeyNotClaimed`).
            TransactionRequest::FollowUp {
                original,
                follow_up,
                labels,
            } => Charged {
                result: self
                    .payments
                    .follow_up_labelled(who, &original, follow_up, labels, recorder)
                    .await,
                key_claimed: false,
            },
        }
    }

    /// Settles `key` with a refusal, which no write stored (a recorded transaction's answer
    /// was stored with it): kept, or the key released when the refusal is transient (5xx), so
    /// a retry runs. Failing to settle leaves the key "running" until it is abandoned; the
    /// request's own answer still goes back.
    async fn settle_refusal(
        &self,
        who: &Principal,
        key: &IdempotencyKey,
        result: &Result<Transaction, PaymentError>,
        renders: &Renders<'_>,
    ) {
        let Err(refusal) = result else {
            return;
        };
        let answer = (renders.refused)(refusal);
        if let Err(e) = self.keys.settle(who, key, &answer).await {
            // The key is the client's: it stays out of the log.
            tracing::error!(error = %e, "could not settle an idempotency key");
        }
    }
}
