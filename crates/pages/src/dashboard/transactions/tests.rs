use super::*;
use time::macros::datetime;

#[test]
fn filters_read_what_parses_and_say_when_something_did_not() {
    let read = |query: &str| {
        let filters: Filters = serde_urlencoded::from_str(query).unwrap();
        filters.filter()
    };
    let (all, ignored) = read("type=sale&state=declined&from=2026-11-01&to=2026-11-02");
    assert!(!ignored);
    assert_eq!(
        (all.kind, all.state, all.created_from, all.created_until),
        (
            Some(TxnType::Sale),
            Some(TxnState::Declined),
            Some(datetime!(2026-11-01 0:00 UTC)),
            Some(datetime!(2026-11-03 0:00 UTC)),
        ),
        "the last day is included whole"
    );
    assert_eq!(
        read("type=&state=&merchant="),
        (TxnFilter::default(), false)
    );
    for bad in [
        "type=refunds",
        "state=<b>",
        "merchant=nope",
        "from=11/01/2026",
    ] {
        assert_eq!(read(bad), (TxnFilter::default(), true), "{bad}");
    }
}
