use super::*;

fn refused(code: &str) -> PaymentResult {
    PaymentResult {
        result_code: "Refused".into(),
        psp_reference: Some("PSP1".into()),
        refusal_reason_code: Some(code.into()),
        refusal_reason: Some("reason".into()),
        ..PaymentResult::default()
    }
}

#[test]
fn every_refusal_reason_declines_with_its_word() {
    for (code, _, decline) in REFUSAL_REASONS {
        let reply = payment_reply(&refused(code), 1000).unwrap();
        assert!(!reply.approved);
        assert_eq!(reply.code, *code, "processorCode is Adyen's code");
        assert_eq!(reply.decline, Some(*decline), "refusal {code}");
        assert_eq!(reply.approved_amount, 0);
    }
    let unknown = payment_reply(&refused("99"), 1000).unwrap();
    assert_eq!(unknown.decline, Some(DeclineCode::GenericDecline));
    let bare = PaymentResult {
        result_code: "Refused".into(),
        ..PaymentResult::default()
    };
    assert_eq!(payment_reply(&bare, 1).unwrap().code, "Refused");
}

#[test]
fn every_result_code_is_read_as_its_row() {
    for (code, kind) in RESULT_CODES {
        let result = PaymentResult {
            result_code: (*code).into(),
            authorised_amount: Some(400),
            ..PaymentResult::default()
        };
        match (payment_reply(&result, 1000), kind) {
            (Ok(reply), ResultKind::Authorised) => {
                assert!(reply.approved && reply.approved_amount == 1000);
            }
            (Ok(reply), ResultKind::PartiallyAuthorised) => {
                assert!(reply.approved && reply.approved_amount == 400);
            }
            (Ok(reply), ResultKind::Refused) => assert!(!reply.approved),
            (Err(got), expected) => assert_eq!(got, *expected),
            (Ok(reply), expected) => panic!("{code}: {reply:?} for {expected:?}"),
        }
    }
    assert_eq!(result_kind("SomethingNew"), ResultKind::Unsettled);
}

#[test]
fn a_partial_amount_is_never_more_than_asked() {
    let partial = |amount| PaymentResult {
        result_code: "PartiallyAuthorised".into(),
        authorised_amount: amount,
        ..PaymentResult::default()
    };
    for (amount, approved) in [
        (Some(1), 1),
        (Some(999), 999),
        (Some(1000), 1000),
        (Some(5000), 1000),
        (Some(0), 1000),
        (Some(-3), 1000),
        (None, 1000),
    ] {
        assert_eq!(
            payment_reply(&partial(amount), 1000)
                .unwrap()
                .approved_amount,
            approved,
            "{amount:?}"
        );
    }
}

#[test]
fn avs_and_cvc_results_by_their_leading_number() {
    for (n, text, code) in AVS_RESULTS {
        assert_eq!(avs(Some(&format!("{n} {text}"))), *code);
    }
    for (n, text, code) in CVC_RESULTS {
        assert_eq!(cvv(Some(&format!("{n} {text}"))), *code);
    }
    assert_eq!(avs(None), AvsCode::Unavailable);
    assert_eq!(avs(Some("99 New")), AvsCode::Unavailable);
    assert_eq!(avs(Some("7")), AvsCode::FullMatch);
    assert_eq!(cvv(Some("x")), CvvCode::NotProcessed);
    assert_eq!(cvv(Some("")), CvvCode::NotProcessed);
}

/// The connector guide's tables are these tables, row for row.
#[test]
fn the_guide_states_every_row() {
    const GUIDE: &str = include_str!("../../../../../../docs/processors/adyen.md");
    for (code, reason, decline) in REFUSAL_REASONS {
        let row = format!("| {code} | {reason} | `{}` |", decline.as_str());
        assert!(GUIDE.contains(&row), "docs/processors/adyen.md lacks {row}");
    }
    for (n, text, avs) in AVS_RESULTS {
        let row = format!("| {n} | {text} | `{}` |", avs.as_str());
        assert!(GUIDE.contains(&row), "docs/processors/adyen.md lacks {row}");
    }
    for (n, text, cvv) in CVC_RESULTS {
        let row = format!("| {n} | {text} | `{}` |", cvv.as_str());
        assert!(GUIDE.contains(&row), "docs/processors/adyen.md lacks {row}");
    }
    for (code, _) in RESULT_CODES {
        assert!(GUIDE.contains(&format!("| `{code}` |")), "docs lack {code}");
    }
}

#[test]
fn http_errors_are_unavailable_with_adyens_code_cleaned() {
    let ProcessorError::Unavailable(why) =
        http_error(422, Some("101 <script>"), Some("validation"))
    else {
        panic!("unavailable");
    };
    assert_eq!(
        why,
        "Adyen refused the request as invalid (errorCode 101script, validation); HTTP 422"
    );
    for status in [400, 401, 403, 404, 422, 500, 503] {
        assert!(matches!(
            http_error(status, None, None),
            ProcessorError::Unavailable(_)
        ));
    }
}
