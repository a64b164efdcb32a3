//! The file's records read back field by field, against the NACHA layouts: lengths, controls,
//! entry hash, padding, check digits; and return files read.

use time::macros::{date, datetime};

use super::*;

fn originator() -> Originator {
    Originator {
        destination: "091000019".into(),
        destination_name: "Wells Fargo Bank".into(),
        origin: "1234567890".into(),
        origin_name: "Holdfast Platform".into(),
        company_name: "Holdfast".into(),
        company_id: "1234567890".into(),
        odfi: "021000021".into(),
    }
}

fn credit<'a>(routing: &'a str, account: &'a str, amount: i64) -> Credit<'a> {
    Credit {
        routing,
        account,
        savings: false,
        amount,
        name: "Corner Shop LLC",
        reference: "po_01JDQ8Y6M2Z4R7V9",
    }
}

fn field(record: &str, from: usize, to: usize) -> &str {
    // The layouts number positions from 1, both ends included.
    &record[from - 1..to]
}

/// Three credits: every record 94 characters, ten to a block, padded with nines; the header's
/// destination and date; each entry's bank, check digit, account, amount and trace; the
/// batch's and the file's counts, totals and entry hash.
#[test]
fn a_file_of_credits_is_its_records_to_the_layout() {
    let credits = [
        credit("021000021", "000123456789", 2500),
        Credit {
            savings: true,
            ..credit("011000015", "987654321", 99)
        },
        credit("091000019", "12345678901234567", MAX_AMOUNT),
    ];
    let file = credit_file(
        &originator(),
        &credits,
        datetime!(2026-12-06 14:05 UTC),
        date!(2026 - 12 - 07),
        'A',
        1,
    )
    .unwrap();
    let records: Vec<&str> = file.text.lines().collect();
    assert_eq!(records.len(), 10, "one block");
    assert!(records.iter().all(|r| r.len() == RECORD_LENGTH));
    let kinds: String = records.iter().map(|r| &r[..1]).collect();
    assert_eq!(kinds, "1566689999");
    assert!(records[7..].iter().all(|r| r.bytes().all(|b| b == b'9')));

    let header = records[0];
    assert_eq!(field(header, 1, 3), "101");
    assert_eq!(field(header, 4, 13), " 091000019");
    assert_eq!(field(header, 14, 23), "1234567890");
    assert_eq!(field(header, 24, 33), "2612061405");
    assert_eq!(field(header, 34, 40), "A094101");
    assert_eq!(field(header, 41, 63).trim_end(), "WELLS FARGO BANK");

    let batch = records[1];
    assert_eq!(field(batch, 2, 4), "220", "credits only");
    assert_eq!(field(batch, 51, 53), "CCD");
    assert_eq!(field(batch, 70, 75), "261207", "effective date");
    assert_eq!(field(batch, 80, 87), "02100002");
    assert_eq!(field(batch, 88, 94), "0000001");

    let mut hash = 0_u64;
    for (i, (entry, credit)) in records[2..5].iter().zip(&credits).enumerate() {
        assert_eq!(field(entry, 2, 3), if credit.savings { "32" } else { "22" });
        assert_eq!(field(entry, 4, 11), &credit.routing[..8]);
        assert_eq!(
            field(entry, 12, 12),
            &credit.routing[8..],
            "the check digit"
        );
        assert_eq!(field(entry, 13, 29).trim_end(), credit.account);
        assert_eq!(field(entry, 30, 39).parse::<i64>().unwrap(), credit.amount);
        assert_eq!(
            field(entry, 40, 54),
            "PO 01JDQ8Y6M2Z4",
            "upper case, only what banks take, cut to 15"
        );
        assert_eq!(field(entry, 55, 76).trim_end(), "CORNER SHOP LLC");
        assert_eq!(field(entry, 80, 94), file.traces[i]);
        assert_eq!(file.traces[i], format!("02100002{:07}", i + 1));
        hash += field(entry, 4, 11).parse::<u64>().unwrap();
    }
    let total: i64 = credits.iter().map(|c| c.amount).sum();
    let control = records[5];
    assert_eq!(field(control, 5, 10), "000003");
    assert_eq!(
        field(control, 11, 20).parse::<u64>().unwrap(),
        hash % 10_000_000_000
    );
    assert_eq!(field(control, 21, 32), "000000000000", "no debits");
    assert_eq!(field(control, 33, 44).parse::<i64>().unwrap(), total);
    assert_eq!(field(control, 45, 54), "1234567890");
    let file_control = records[6];
    assert_eq!(field(file_control, 2, 7), "000001", "batches");
    assert_eq!(field(file_control, 8, 13), "000001", "blocks");
    assert_eq!(field(file_control, 14, 21), "00000003");
    assert_eq!(field(file_control, 22, 31), field(control, 11, 20));
    assert_eq!(field(file_control, 44, 55).parse::<i64>().unwrap(), total);
}

/// The entry hash keeps its last ten digits, and a file of eight records takes a second block.
#[test]
fn the_entry_hash_keeps_ten_digits_and_blocks_fill_to_ten() {
    let credits = vec![credit("091000019", "1234", 1); 1400];
    let file = credit_file(
        &originator(),
        &credits,
        datetime!(2026-12-06 14:05 UTC),
        date!(2026 - 12 - 07),
        'B',
        1,
    )
    .unwrap();
    let records: Vec<&str> = file.text.lines().collect();
    assert_eq!(records.len() % 10, 0);
    assert_eq!(records.len(), 1410, "1404 records, padded");
    let hash = 9_100_001_u64 * 1400;
    assert!(hash > 9_999_999_999, "the sum overflows ten digits");
    let control = records[1402];
    assert_eq!(
        field(control, 11, 20),
        format!("{:010}", hash % 10_000_000_000)
    );
    assert_eq!(field(records[1403], 8, 13), "000141");
}

/// What cannot be written is refused by the credit's number, never echoed; a file of none is
/// its header and controls.
#[test]
fn what_cannot_be_written_is_refused() {
    let at = datetime!(2026-12-06 14:05 UTC);
    let on = date!(2026 - 12 - 07);
    for (bad, says) in [
        (credit("091000018", "1234", 1), "check digit"),
        (credit("09100001", "1234", 1), "check digit"),
        (credit("091000019", "123", 1), "account number"),
        (credit("091000019", "12a4", 1), "account number"),
        (
            credit("091000019", "123456789012345678", 1),
            "account number",
        ),
        (credit("091000019", "1234", 0), "amount"),
        (credit("091000019", "1234", MAX_AMOUNT + 1), "amount"),
    ] {
        let refused = credit_file(
            &originator(),
            &[credit("091000019", "1234", 5), bad],
            at,
            on,
            'A',
            1,
        )
        .unwrap_err();
        assert_eq!(refused.field, "credits");
        assert!(
            refused.message.starts_with("credit 2: "),
            "{}",
            refused.message
        );
        assert!(refused.message.contains(says), "{}", refused.message);
        assert!(!refused.message.contains(bad.account) || bad.account.len() < 4);
    }
    let one = [credit("091000019", "1234", 5)];
    let wrong_odfi = Originator {
        odfi: "021000022".into(),
        ..originator()
    };
    let refused = |originator: &Originator, credits: &[Credit<'_>], modifier, first| {
        credit_file(originator, credits, at, on, modifier, first)
            .unwrap_err()
            .field
    };
    assert_eq!(refused(&wrong_odfi, &one, 'A', 1), "odfi");
    assert_eq!(refused(&originator(), &one, 'a', 1), "modifier");
    assert_eq!(
        refused(&originator(), &[], 'A', 1),
        "credits",
        "banks refuse an empty batch"
    );
    assert_eq!(refused(&originator(), &one, 'A', 0), "firstTrace");
    assert_eq!(
        refused(&originator(), &[one[0]; 2], 'A', 9_999_999),
        "firstTrace"
    );
    let most = [credit("091000019", "1234", MAX_AMOUNT); 101];
    assert_eq!(
        refused(&originator(), &most, 'A', 1),
        "credits",
        "past 12 digits of cents"
    );
    let last = credit_file(&originator(), &one, at, on, '0', 9_999_999).unwrap();
    assert_eq!(last.traces, ["021000029999999"]);
}

/// Trace numbers count on from the one asked for, so files never repeat one.
#[test]
fn traces_count_on_from_file_to_file() {
    let at = datetime!(2026-12-06 14:05 UTC);
    let on = date!(2026 - 12 - 07);
    let two = [credit("091000019", "1234", 5); 2];
    let first = credit_file(&originator(), &two, at, on, 'A', 1).unwrap();
    let next = credit_file(&originator(), &two, at, on, 'B', 3).unwrap();
    assert_eq!(first.traces, ["021000020000001", "021000020000002"]);
    assert_eq!(next.traces, ["021000020000003", "021000020000004"]);
}

/// A return file's `99` addenda name the entry returned and why; other records are passed
/// over; a record of another length is refused by its line.
#[test]
fn returns_are_read_from_their_addenda() {
    let addenda =
        |code: &str, trace: &str| format!("799{code}{trace}      09100001{:44}021000020000001", "");
    let text = format!(
        "{}\n{}\r\n{}\n{}\n",
        "1".repeat(94),
        addenda("R03", "021000020000002"),
        "6".repeat(94),
        addenda("R16", "021000020000007"),
    );
    let returns = read_returns(&text).unwrap();
    assert_eq!(
        returns
            .iter()
            .map(|r| (r.original_trace, r.code.as_code()))
            .collect::<Vec<_>>(),
        [
            ("021000020000002", "R03".to_owned()),
            ("021000020000007", "R16".to_owned())
        ]
    );
    let short = format!("{}\n{}\n", "1".repeat(94), "7".repeat(93));
    assert_eq!(
        read_returns(&short).unwrap_err().message,
        "line 2 is not a 94-character record"
    );
    let no_code = addenda("X03", "021000020000002");
    assert_eq!(
        read_returns(&no_code).unwrap_err().message,
        "line 1 has no ACH return code"
    );
}

/// A file is whole with its header first and its file control after; a file still being
/// written, cut short, or empty is not.
#[test]
fn only_a_whole_file_is_whole() {
    let file = credit_file(
        &originator(),
        &[credit("091000019", "12345678", 100)],
        datetime!(2026-12-07 10:00 UTC),
        date!(2026 - 12 - 08),
        'A',
        1,
    )
    .unwrap()
    .text;
    assert!(is_whole(&file));
    let cut = file.lines().take(4).collect::<Vec<_>>().join("\n") + "\n";
    assert!(!is_whole(&cut), "cut before its file control");
    assert!(!is_whole(""));
    assert!(!is_whole(&format!("{}\n", "9".repeat(94))), "padding alone");
    assert!(
        !is_whole(&file.replacen('1', "5", 1)),
        "no file header first"
    );
}
