//! NACHA files read by an independent parser: `PyPI`'s `carta-ach` (tests/e2e/requirements.txt),
//! whose records the tests then check against each other.

use serde_json::Value;

/// `text` as `carta-ach` parses it: `file_header`, `batches` (each with `batch_header`,
/// `entries` and `batch_control`) and `file_control`, every field as the text it read.
pub fn parse(text: &str) -> Value {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, json\nfrom ach.parser import Parser\nprint(Parser(sys.stdin.read()).as_json())",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .expect("piped")
                .write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .expect("python3 with carta-ach (tests/e2e/requirements.txt)");
    assert!(
        out.status.success(),
        "carta-ach could not read the file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("carta-ach's JSON")
}

/// A bank's return file for the entry with trace `trace` of `amount` cents, returned with
/// `code`: the file header, a batch of the returned entry and its `99` addenda, the controls,
/// padded to ten records (the layout the bank sends; only the addenda's code and trace are read).
pub fn return_file(trace: &str, amount: i64, code: &str) -> String {
    let records = [
        format!(
            "101 021000021 091000019261207{:0>4}A094101{:<23}{:<23}{:<8}",
            900, "BANK", "HOLDFAST", ""
        ),
        format!(
            "5220HOLDFAST        {:<20}1234567890CCDRETURN    261207261207   1091000010000001",
            ""
        ),
        format!(
            "626091000019000123456789     {amount:010}{:<15}{:<22}  1091000010000001",
            "RETURNED", "CORNER SHOP LLC"
        ),
        format!("799{code}{trace}      02100002{:<44}091000010000001", ""),
        format!(
            "82200000020009100001000000000000{amount:012}1234567890{:<25}091000010000001",
            ""
        ),
        format!(
            "9000001000001000000020009100001000000000000{amount:012}{:<39}",
            ""
        ),
    ];
    let mut lines: Vec<String> = records.to_vec();
    while !lines.len().is_multiple_of(10) {
        lines.push("9".repeat(94));
    }
    for line in &lines {
        assert_eq!(line.len(), 94, "{line}");
    }
    lines.join("\n") + "\n"
}
