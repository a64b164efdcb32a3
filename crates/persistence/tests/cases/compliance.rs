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

fn event() -> EventId {
    EventId::from_suffix(&CountingIds.next_id())
}

pub async fn compliance_forms_go_overdue_once_and_only_the_latest_renews(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let (one, two) = (
        MerchantId::from_suffix("one"),
        MerchantId::from_suffix("two"),
    );
    let year = time::Duration::days(365);
    // Merchant one: last year's form and this year's; merchant two: last year's only.
    let old_one = issued(&p, &one, T0 - year - year);
    let new_one = issued(&p, &one, T0 - time::Duration::days(10));
    let old_two = issued(&p, &two, T0 - year - year);
    for form in [&old_one, &new_one, &old_two] {
        stores
            .compliance
            .issue_compliance(form, &event())
            .await
            .unwrap();
    }
    let renewable = stores.compliance.renewable(T0 - year, 10).await.unwrap();
    let ids: Vec<&str> = renewable.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, [old_two.id.as_str()], "merchant one has a newer form");

    let due = stores.compliance.pending_due(T0, 10).await.unwrap();
    assert_eq!(due.len(), 2, "the two old forms are past due");
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
