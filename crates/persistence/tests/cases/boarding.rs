//! Boarding forms: a form written with its new merchant and events in one transaction, found by
//! its link's hash and in its scope only, replaced only while its status allows, the merchant's
//! onboarding status changed (and reported) once.

use holdfast_domain::boarding::OnboardingStatus;
use holdfast_domain::boarding::answers::Answers;
use holdfast_domain::boarding::form::{BoardingForm, FormStatus, SealedValue};
use holdfast_domain::ids::{BoardingFormId, EventId};
use holdfast_domain::ports::{FormWrite, Guard, Sealed};

use super::*;

fn form(p: &Principal, merchant: &Merchant, link: &str) -> BoardingForm {
    BoardingForm {
        id: BoardingFormId::from_suffix(&CountingIds.next_id()),
        platform_id: p.scope.platform.clone(),
        mode: p.scope.mode,
        merchant_id: merchant.id.clone(),
        status: FormStatus::Open,
        link_hash: KeyHash::of(link),
        expires_on: T0 + time::Duration::days(7),
        answers: Answers::default(),
        tax_id: None,
        bank_account: None,
        requested_fields: Vec::new(),
        reason: None,
        submission: None,
        created_on: T0,
        updated_on: T0,
    }
}

fn sealed(last4: &str) -> SealedValue {
    SealedValue {
        sealed: Sealed {
            key_id: "k1".into(),
            nonce: vec![1; 12],
            ciphertext: vec![2; 24],
        },
        last4: last4.into(),
    }
}

/// The types of the scope's last `n` events, oldest first.
async fn last_event_types(stores: &Stores, scope: &Scope, n: usize) -> Vec<String> {
    let types: Vec<String> = stores
        .events
        .list_events(scope)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_type)
        .collect();
    types[types.len().saturating_sub(n)..].to_vec()
}

fn event() -> EventId {
    EventId::from_suffix(&CountingIds.next_id())
}

/// `made` is found in its scope and by its link's hash, and nowhere else.
async fn assert_found_in_scope_and_by_link(
    stores: &Stores,
    a: &CreatedPlatform,
    made: &BoardingForm,
) {
    let p = principal(a, Mode::Test);
    assert_eq!(
        stores.boarding.get_form(&p.scope, &made.id).await.unwrap(),
        Some(made.clone())
    );
    let live = principal(a, Mode::Live);
    assert_eq!(
        stores
            .boarding
            .get_form(&live.scope, &made.id)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        stores
            .boarding
            .form_by_link(&KeyHash::of("LINK1"))
            .await
            .unwrap(),
        Some(made.clone())
    );
    assert_eq!(
        stores
            .boarding
            .form_by_link(&KeyHash::of("LINK2"))
            .await
            .unwrap(),
        None
    );
}

pub async fn boarding_forms_are_written_whole_with_their_events(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let new_merchant = merchant(&p, "Boarded");
    let made = form(&p, &new_merchant, "LINK1");
    let write = FormWrite {
        new_merchant: Some((new_merchant.clone(), event())),
        form_event: Some(event()),
        ..FormWrite::default()
    };
    assert!(stores.boarding.write_form(&made, write).await.unwrap());
    assert_found_in_scope_and_by_link(&stores, &a, &made).await;

    // Answers saved with a sealed value, twice; the merchant moves to in_progress once.
    let mut saved = made.clone();
    for (n, last4) in [(1, "6789"), (2, "4321")] {
        let read = saved.clone();
        saved = BoardingForm {
            tax_id: Some(sealed(last4)),
            updated_on: T0 + time::Duration::minutes(n),
            ..read.clone()
        };
        let write = FormWrite {
            merchant_status: Some((OnboardingStatus::InProgress, event())),
            guard: Guard::Unchanged(FormStatus::Open, read.updated_on),
            ..FormWrite::default()
        };
        assert!(stores.boarding.write_form(&saved, write).await.unwrap());
    }
    // A write from what was read before those saves (a new link, another window) loses: it
    // would undo them, so nothing of it is written.
    let stale = BoardingForm {
        link_hash: KeyHash::of("LINK-STALE"),
        updated_on: T0 + time::Duration::minutes(5),
        ..made.clone()
    };
    let write = FormWrite {
        guard: Guard::Unchanged(FormStatus::Open, made.updated_on),
        ..FormWrite::default()
    };
    assert!(!stores.boarding.write_form(&stale, write).await.unwrap());
    assert_eq!(
        stores.boarding.get_form(&p.scope, &made.id).await.unwrap(),
        Some(saved.clone())
    );
    // Once submitted, a save made from the open form no longer writes.
    let submitted = BoardingForm {
        status: FormStatus::Submitted,
        ..saved.clone()
    };
    let write = FormWrite {
        form_event: Some(event()),
        merchant_status: Some((OnboardingStatus::Submitted, event())),
        guard: Guard::Unchanged(FormStatus::Open, saved.updated_on),
        ..FormWrite::default()
    };
    assert!(stores.boarding.write_form(&submitted, write).await.unwrap());
    let late = FormWrite {
        guard: Guard::Status(FormStatus::Open),
        ..FormWrite::default()
    };
    assert!(!stores.boarding.write_form(&saved, late).await.unwrap());

    assert_eq!(
        last_event_types(&stores, &p.scope, 5).await,
        [
            "merchant.created",
            "form.created",
            "merchant.updated",
            "form.completed",
            "merchant.updated"
        ],
        "one merchant.updated per status change"
    );
    let merchant = stores
        .merchants
        .get_merchant(&p.scope, &new_merchant.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(merchant.onboarding_status, OnboardingStatus::Submitted);
    let page = stores
        .boarding
        .list_forms(&p.scope, &PageRequest::new(None, None).unwrap())
        .await
        .unwrap();
    assert_eq!(page.data, [submitted]);
}

/// Approval is final: other forms of the merchant, opened before the approval, neither take it
/// back out of `approved` (saved, declined) nor issue a second compliance form (approved too).
pub async fn an_approved_merchant_stays_approved_whatever_its_other_forms_do(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let m = stored_merchant(&stores, &p, "Twice").await;
    let forms = [
        form(&p, &m, "LINK-A"),
        form(&p, &m, "LINK-B"),
        form(&p, &m, "LINK-C"),
    ];
    for made in &forms {
        let write = FormWrite {
            form_event: Some(event()),
            ..FormWrite::default()
        };
        assert!(stores.boarding.write_form(made, write).await.unwrap());
    }
    let decide = async |made: &BoardingForm, to: FormStatus, merchant: OnboardingStatus| {
        let decided = BoardingForm {
            status: to,
            updated_on: made.updated_on + time::Duration::minutes(1),
            ..made.clone()
        };
        let compliance = (merchant == OnboardingStatus::Approved).then(|| {
            let issued = holdfast_domain::compliance::ComplianceForm::issue(
                holdfast_domain::ids::ComplianceFormId::from_suffix(&CountingIds.next_id()),
                p.scope.platform.clone(),
                p.scope.mode,
                m.id.clone(),
                decided.updated_on,
            );
            (issued, event())
        });
        let write = FormWrite {
            merchant_status: Some((merchant, event())),
            compliance,
            guard: Guard::Unchanged(made.status, made.updated_on),
            ..FormWrite::default()
        };
        assert!(stores.boarding.write_form(&decided, write).await.unwrap());
        let now = stores
            .merchants
            .get_merchant(&p.scope, &m.id)
            .await
            .unwrap();
        now.unwrap().onboarding_status
    };
    let approved = OnboardingStatus::Approved;
    assert_eq!(
        decide(&forms[0], FormStatus::Approved, approved).await,
        approved
    );
    let mut after_approval = last_event_types(&stores, &p.scope, 2).await;
    after_approval.sort();
    assert_eq!(after_approval, ["compliance.created", "merchant.updated"]);
    let approval_events = count_of(&stores, &p.scope, &after_approval).await;

    let saved = OnboardingStatus::InProgress;
    assert_eq!(
        decide(&forms[1], FormStatus::Open, saved).await,
        approved,
        "a save"
    );
    let declined = OnboardingStatus::Declined;
    assert_eq!(
        decide(&forms[2], FormStatus::Declined, declined).await,
        approved,
        "a decline"
    );
    let again = BoardingForm {
        updated_on: forms[1].updated_on + time::Duration::minutes(1),
        ..forms[1].clone()
    };
    assert_eq!(
        decide(&again, FormStatus::Approved, approved).await,
        approved
    );
    assert_eq!(
        count_of(&stores, &p.scope, &after_approval).await,
        approval_events,
        "no merchant.updated and no second compliance.created since the approval"
    );
}

/// How many of the scope's events have one of `types`.
async fn count_of(stores: &Stores, scope: &Scope, types: &[String]) -> usize {
    let events = stores.events.list_events(scope).await.unwrap();
    events
        .iter()
        .filter(|e| types.contains(&e.event_type))
        .count()
}
