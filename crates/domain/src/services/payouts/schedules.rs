//! Payout schedules: a merchant's, read and set, and the run that pays out every one due.

use std::sync::Arc;

use super::PayoutService;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{EventId, MerchantId};
use crate::payout::{MerchantSchedule, Payout, PayoutSchedule};
use crate::ports::{AnnouncePayout, Event, EventData, Ids, ScheduledRun, StoreError};
use crate::services::ServiceError;

impl PayoutService {
    /// Pays out every schedule due now, in one SQL transaction: how many payouts it made.
    pub async fn run_schedules(&self) -> Result<u64, StoreError> {
        let now = self.clock.now();
        let run = ScheduledRun {
            now,
            id_prefix: self.ids.next_id().chars().take(16).collect(),
        };
        let announce = Arc::new(Announcer {
            ids: self.ids.clone(),
        });
        let made = self.payouts.pay_out_scheduled(&run, announce).await?;
        if made > 0 {
            tracing::info!(made, "scheduled payouts made");
        }
        Ok(made)
    }

    /// `merchant`'s payout schedule (manual when it has none set).
    pub async fn schedule(
        &self,
        who: &Principal,
        merchant: &MerchantId,
    ) -> Result<MerchantSchedule, ServiceError> {
        self.merchant_exists(who, merchant).await?;
        let schedule = self
            .payouts
            .schedule(&who.scope, merchant)
            .await
            .map_err(ServiceError::Store)?
            .unwrap_or(PayoutSchedule::MANUAL);
        Ok(MerchantSchedule::of(merchant.clone(), schedule))
    }

    /// Sets `merchant`'s payout schedule.
    pub async fn set_schedule(
        &self,
        who: &Principal,
        merchant: &MerchantId,
        schedule: PayoutSchedule,
        reply: Option<&Recorder<'_, MerchantSchedule>>,
    ) -> Result<MerchantSchedule, ServiceError> {
        self.merchant_exists(who, merchant).await?;
        let shown = MerchantSchedule::of(merchant.clone(), schedule);
        self.payouts
            .set_schedule(
                &who.scope,
                merchant,
                schedule,
                self.clock.now(),
                reply_for(reply, &shown),
            )
            .await
            .map_err(ServiceError::Store)?;
        Ok(shown)
    }

    async fn merchant_exists(
        &self,
        who: &Principal,
        merchant: &MerchantId,
    ) -> Result<(), ServiceError> {
        self.merchants
            .get_merchant(&who.scope, merchant)
            .await
            .map_err(ServiceError::Store)?
            .map(drop)
            .ok_or(ServiceError::NotFound("merchant"))
    }
}

/// Each scheduled payout's `payout.created`, stamped with its time.
struct Announcer {
    ids: Arc<dyn Ids>,
}

impl AnnouncePayout for Announcer {
    fn event_for(&self, payout: &Payout) -> Event {
        Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: payout.platform_id.clone(),
            mode: payout.mode,
            created_on: payout.created_on,
            data: EventData::PayoutCreated(Box::new(payout.clone())),
        }
    }
}
