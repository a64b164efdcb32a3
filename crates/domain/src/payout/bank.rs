//! What banks answer a payout with: the ACH return codes, and the sandbox bank test mode pays
//! through (its table is `SANDBOX_ACCOUNTS`, listed in docs/money.md).

use crate::Invalid;

/// An ACH return code, `R01` to `R85`: why a bank sent a payout back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReturnCode(u8);

/// What each assigned code means (Nacha Operating Rules, Appendix Four); codes not listed are
/// valid but unassigned.
const MEANINGS: &[(u8, &str)] = &[
    (1, "Insufficient funds"),
    (2, "Account closed"),
    (3, "No account / unable to locate account"),
    (4, "Invalid account number structure"),
    (
        5,
        "Unauthorized debit to consumer account using corporate SEC code",
    ),
    (6, "Returned per ODFI's request"),
    (7, "Authorization revoked by customer"),
    (8, "Payment stopped"),
    (9, "Uncollected funds"),
    (10, "Customer advises not authorized"),
    (
        11,
        "Customer advises entry not in accordance with the terms of the authorization",
    ),
    (12, "Account sold to another DFI"),
    (13, "Invalid ACH routing number"),
    (
        14,
        "Representative payee deceased or unable to continue in that capacity",
    ),
    (15, "Beneficiary or account holder deceased"),
    (16, "Account frozen / entry returned per OFAC instruction"),
    (17, "File record edit criteria"),
    (18, "Improper effective entry date"),
    (19, "Amount field error"),
    (20, "Non-transaction account"),
    (21, "Invalid company identification"),
    (22, "Invalid individual ID number"),
    (23, "Credit entry refused by receiver"),
    (24, "Duplicate entry"),
    (25, "Addenda error"),
    (26, "Mandatory field error"),
    (27, "Trace number error"),
    (28, "Routing number check digit error"),
    (29, "Corporate customer advises not authorized"),
    (30, "RDFI not participant in check truncation program"),
    (31, "Permissible return entry (CCD and CTX only)"),
    (32, "RDFI non-settlement"),
    (33, "Return of XCK entry"),
    (34, "Limited participation DFI"),
    (35, "Return of improper debit entry"),
    (36, "Return of improper credit entry"),
    (37, "Source document presented for payment"),
    (38, "Stop payment on source document"),
    (
        39,
        "Improper source document / source document presented for payment",
    ),
    (40, "Return of ENR entry by federal government agency"),
    (41, "Invalid transaction code (ENR)"),
    (42, "Routing number / check digit error (ENR)"),
    (43, "Invalid DFI account number (ENR)"),
    (
        44,
        "Invalid individual ID number / identification number (ENR)",
    ),
    (45, "Invalid individual name / company name (ENR)"),
    (46, "Invalid representative payee indicator (ENR)"),
    (47, "Duplicate enrollment (ENR)"),
    (50, "State law affecting RCK acceptance"),
    (
        51,
        "Item related to RCK entry is ineligible or RCK entry is improper",
    ),
    (52, "Stop payment on item related to RCK entry"),
    (53, "Item and RCK entry presented for payment"),
    (61, "Misrouted return"),
    (62, "Return of erroneous or reversing debit"),
    (67, "Duplicate return"),
    (68, "Untimely return"),
    (69, "Field error(s)"),
    (
        70,
        "Permissible return entry not accepted / return not requested by ODFI",
    ),
    (71, "Misrouted dishonored return"),
    (72, "Untimely dishonored return"),
    (73, "Timely original return"),
    (74, "Corrected return"),
    (75, "Return not a duplicate"),
    (76, "No errors found"),
    (77, "Non-acceptance of R62 dishonored return"),
    (80, "IAT entry coding error"),
    (81, "Non-participant in IAT program"),
    (82, "Invalid foreign receiving DFI identification"),
    (83, "Foreign receiving DFI unable to settle"),
    (84, "Entry not processed by gateway"),
    (85, "Incorrectly coded outbound international payment"),
];

impl ReturnCode {
    /// `R01` to `R85` as a bank writes it; refused under `field` otherwise (never repeated).
    pub fn parse(field: &'static str, raw: &str) -> Result<Self, Invalid> {
        raw.strip_prefix('R')
            .filter(|digits| digits.len() == 2 && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u8>().ok())
            .filter(|n| (1..=85).contains(n))
            .map(Self)
            .ok_or_else(|| Invalid::new(field, "must be an ACH return code, R01 to R85"))
    }

    /// The code as banks write it: `R03`.
    pub fn as_code(self) -> String {
        format!("R{:02}", self.0)
    }

    /// What it means, in the rules' words; "Unassigned return code" for a code with none.
    pub fn meaning(self) -> &'static str {
        MEANINGS
            .iter()
            .find(|(n, _)| *n == self.0)
            .map_or("Unassigned return code", |(_, m)| m)
    }
}

/// As banks write it: `"R03"`.
impl serde::Serialize for ReturnCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl std::fmt::Display for ReturnCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "R{:02}", self.0)
    }
}

/// How the sandbox bank answers a payout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxOutcome {
    /// Paid at once.
    Paid,
    /// Returned at once, with this code.
    Returned(ReturnCode),
}

/// The account a test payout goes to when its merchant has no boarding form with one: paid.
pub const SANDBOX_PAYING_ACCOUNT: &str = "000123456789";

/// The sandbox bank's test accounts: the account number, and how a payout to it ends. Any
/// other account number is paid.
pub const SANDBOX_ACCOUNTS: &[(&str, SandboxOutcome)] = &[
    (SANDBOX_PAYING_ACCOUNT, SandboxOutcome::Paid),
    ("000111111116", SandboxOutcome::Returned(ReturnCode(3))),
    ("000111111113", SandboxOutcome::Returned(ReturnCode(2))),
    ("000222222227", SandboxOutcome::Returned(ReturnCode(16))),
    ("000333333335", SandboxOutcome::Returned(ReturnCode(23))),
];

/// How the sandbox bank answers a payout to `account_number`.
pub fn sandbox_outcome(account_number: &str) -> SandboxOutcome {
    SANDBOX_ACCOUNTS
        .iter()
        .find(|(number, _)| *number == account_number)
        .map_or(SandboxOutcome::Paid, |(_, outcome)| *outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_codes_are_r01_to_r85() {
        for n in 1..=85_u8 {
            let code = format!("R{n:02}");
            assert_eq!(ReturnCode::parse("code", &code).unwrap().as_code(), code);
        }
        for bad in [
            "R00", "R86", "R1", "R001", "r07", "07", "", "R0A", "X07", "R+1",
        ] {
            let refused = ReturnCode::parse("code", bad).unwrap_err();
            assert_eq!(refused.field, "code");
            assert!(
                bad.is_empty() || !refused.message.contains(bad),
                "never echoed"
            );
        }
        let parse = |raw| ReturnCode::parse("code", raw).unwrap();
        assert_eq!(
            parse("R03").meaning(),
            "No account / unable to locate account"
        );
        assert_eq!(parse("R58").meaning(), "Unassigned return code");
        assert!(
            MEANINGS.windows(2).all(|w| w[0].0 < w[1].0),
            "listed in order"
        );
    }

    /// docs/money.md lists every sandbox account with its outcome and code.
    #[test]
    fn the_documented_table_lists_every_sandbox_account() {
        let doc = include_str!("../../../../docs/money.md");
        for (number, outcome) in SANDBOX_ACCOUNTS {
            let row = doc
                .lines()
                .find(|line| line.starts_with(&format!("| `{number}` |")))
                .unwrap_or_else(|| panic!("{number} is missing from docs/money.md"));
            match outcome {
                SandboxOutcome::Paid => assert!(row.contains("paid"), "{row}"),
                SandboxOutcome::Returned(code) => {
                    assert!(
                        row.contains(&format!("`{code}`: {}", code.meaning())),
                        "{row}"
                    );
                }
            }
        }
    }

    /// The documented table, row by row; any other number pays.
    #[test]
    fn the_sandbox_bank_answers_by_account_number() {
        let returned = |n| SandboxOutcome::Returned(ReturnCode(n));
        for (number, expected) in [
            ("000123456789", SandboxOutcome::Paid),
            ("000111111116", returned(3)),
            ("000111111113", returned(2)),
            ("000222222227", returned(16)),
            ("000333333335", returned(23)),
            ("987654321", SandboxOutcome::Paid),
        ] {
            assert_eq!(sandbox_outcome(number), expected, "{number}");
        }
    }
}
