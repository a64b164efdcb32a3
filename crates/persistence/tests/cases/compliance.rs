//! Compliance forms: the due ones found, a transition written once, and only a merchant's
//! latest form renewed.

use holdfast_domain::compliance::{ComplianceForm, ComplianceStatus};
use holdfast_domain::ids::{ComplianceFormId, EventId};

use super::*;

fn issued(p: &Principal, merchant: &MerchantId, at: OffsetDateTime) -> ComplianceForm {
    ComplianceForm::issue(
        ComplianceFormId::from_suffix(&CountingIds.next_id()),
        p.scope.platform.clone(),
        p.scope.mode,
        merchant.clone(),
        at,
    )
}

/// A merchant of `p`, approved, written with its event.
async fn approved(stores: &Stores, p: &Principal, name: &str) -> MerchantId {
    let m = Merchant {
        onboarding_status: holdfast_domain::boarding::OnboardingStatus::Approved,
        ..merchant(p, name)
    };
    stores
        .merchants
        .insert_merchant_with_event(&m, &event(), None)
        .await
        .unwrap();
    m.id
}

fn event() -> EventId {
    EventId::from_suffix(&CountingIds.next_id())
}

/// A second form for `first`'s merchant is refused, whether issued at the same instant or at
/// another maintainer's clock's instant just before or after it.
async fn assert_one_form_a_year(stores: &Stores, first: &ComplianceForm) {
    for skew in [
        time::Duration::ZERO,
        time::Duration::minutes(1),
        -time::Duration::minutes(1),
    ] {
        let twin = ComplianceForm {
            id: ComplianceFormId::from_suffix(&CountingIds.next_id()),
            issued_on: first.issued_on + skew,
            due_on: first.due_on + skew,
            ..first.clone()
        };
        assert!(
            !stores
                .compliance
                .issue_compliance(&twin, &event())
                .await
                .unwrap(),
            "one form per merchant and year ({skew})"
        );
    }
}

pub async fn compliance_forms_go_overdue_once_and_only_the_latest_renews(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let one = approved(&stores, &p, "One").await;
    let two = approved(&stores, &p, "Two").await;
    let gone = approved(&stores, &p, "Gone").await;
    let never = approved(&stores, &p, "Never").await;
    let year = time::Duration::days(365);
    // Merchant one: last year's form and this year's; merchant two: last year's only.
    let old_one = issued(&p, &one, T0 - year - year);
    let new_one = issued(&p, &one, T0 - time::Duration::days(10));
    let old_two = issued(&p, &two, T0 - year - year);
    let deleted_form = issued(&p, &gone, T0 - year - year);
    for form in [&old_one, &new_one, &old_two, &deleted_form] {
        assert!(
            stores
                .compliance
                .issue_compliance(form, &event())
                .await
                .unwrap()
        );
    }
    assert_one_form_a_year(&stores, &old_two).await;
    stores
        .merchants
        .delete_merchant_with_event(&p.scope, &gone, T0, &event())
        .await
        .unwrap();
    let renewable = stores.compliance.renewable(T0 - year, 10).await.unwrap();
    let ids: Vec<&str> = renewable.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        [old_two.id.as_str()],
        "merchant one has a newer form; a deleted merchant is not renewed"
    );
    let unissued = stores.compliance.unissued(10).await.unwrap();
    let ids: Vec<&MerchantId> = unissued.iter().map(|m| &m.id).collect();
    assert_eq!(ids, [&never], "approved with no form at all");

    let due = stores.compliance.pending_due(T0, 10).await.unwrap();
    assert_eq!(due.len(), 3, "the three old forms are past due");
    let late = ComplianceForm {
        status: ComplianceStatus::Overdue,
        ..old_two.clone()
    };
    assert!(
        stores
            .compliance
            .mark_overdue(&late, &event())
            .await
            .unwrap()
    );
    assert!(
        !stores
            .compliance
            .mark_overdue(&late, &event())
            .await
            .unwrap(),
        "once"
    );
    let current = stores
        .compliance
        .current_compliance(&p.scope, &two)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(current.status, ComplianceStatus::Overdue);
    let other_mode = principal(&a, Mode::Live);
    assert!(
        stores
            .compliance
            .current_compliance(&other_mode.scope, &two)
            .await
            .unwrap()
            .is_none()
    );
}

/// A raw-card payment notes its merchant once, in its own scope only.
pub async fn a_raw_card_is_noted_on_its_merchant_once(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let m = stored_merchant(&stores, &p, "Shop").await;
    let live = principal(&a, Mode::Live);
    stores
        .transactions
        .note_raw_cards(&live.scope, &m.id, T0)
        .await
        .unwrap();
    let read = |stores: Stores, p: Principal, id: MerchantId| async move {
        stores
            .merchants
            .get_merchant(&p.scope, &id)
            .await
            .unwrap()
            .unwrap()
            .raw_cards_on
    };
    assert_eq!(
        read(stores.clone(), p.clone(), m.id.clone()).await,
        None,
        "another mode's note"
    );
    for at in [T0, T0 + time::Duration::days(1)] {
        stores
            .transactions
            .note_raw_cards(&p.scope, &m.id, at)
            .await
            .unwrap();
    }
    assert_eq!(
        read(stores.clone(), p, m.id).await,
        Some(T0),
        "the first one stays"
    );
}
