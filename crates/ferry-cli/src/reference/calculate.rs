//! The tools of seed 001's raw-protocol server: `calculate` and `get_timestamp`.
//!
//! The seed evaluates `calculate` with JavaScript's `Function(...)` behind a character
//! filter; here a real parser ([`parser`]) evaluates the arithmetic and nothing else.
//! Results read as in the seed, which answers `2 + 3 * 4` with the text `14` (JavaScript's
//! `String(number)`: integers without `.0`, the shortest digits that round-trip, exponent
//! notation from 1e21 and below 1e-6). Failures are `isError` results whose text starts
//! with `Error:` as in the seed.

mod lexer;
mod parser;

use std::time::{SystemTime, UNIX_EPOCH};

use ferry::protocol::types::CallToolResult;
use ferry::server::{ServerBuilder, ToolContext};
use schemars::JsonSchema;
use serde::Deserialize;

/// The arguments of `calculate`.
#[derive(Deserialize, JsonSchema)]
struct CalculateArgs {
    /// Math expression to evaluate (e.g., '2 + 3 * 4'): numbers (1.5e3), + - * / %
    /// (remainder), ^ (power, right-associative), parentheses, unary minus and plus.
    expression: String,
}

/// The arguments of `get_timestamp`: none.
#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// Register `calculate` and `get_timestamp`.
pub(crate) fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            "calculate",
            "Evaluate a mathematical expression: + - * / % ^ and parentheses over decimal \
             numbers; -2^2 is -4 (power binds tighter than unary minus).",
            |args: CalculateArgs, _cx: ToolContext| async move { calculate(&args.expression) },
        )
        .tool(
            "get_timestamp",
            "Get the current UTC timestamp in ISO 8601 format",
            |_args: NoArgs, _cx: ToolContext| async move { iso_timestamp(SystemTime::now()) },
        )
}

/// The result of `calculate` for `expression`.
fn calculate(expression: &str) -> CallToolResult {
    match parser::evaluate(expression) {
        Ok(value) => CallToolResult::success(vec![ferry::protocol::types::ContentBlock::text(
            format_number(value),
        )]),
        Err(e) => CallToolResult::error(format!("Error: {e}")),
    }
}

/// `calculate`'s value of `expression`, or its error's text: the entry point of the fuzz
/// target that includes this file (`fuzz/checks/calculate.rs`) and of its corpus replay
/// (`tests/fuzz_corpora.rs`); unused by the command itself.
#[cfg(any(test, feature = "fuzzing"))]
#[cfg_attr(test, allow(dead_code))]
pub(crate) fn fuzz_evaluate(expression: &str) -> Result<f64, String> {
    parser::evaluate(expression).map_err(|e| e.to_string())
}

/// `value` as JavaScript's `String(number)` writes it (the seed's output): `14`, `0.5`,
/// `0.30000000000000004`, `1e+21`, `1e-7`; negative zero is `0`.
pub(crate) fn format_number(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    if !value.is_finite() {
        return value.to_string();
    }
    // `{:e}` writes the shortest digits that round-trip: "1.2345e3", "5e-7".
    let scientific = format!("{:e}", value.abs());
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return value.to_string();
    };
    let Ok(exponent) = exponent.parse::<i64>() else {
        return value.to_string();
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    // value = 0.digits * 10^n
    let n = exponent + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        let (whole, fraction) = digits.split_at(n as usize);
        format!("{whole}.{fraction}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let sign = if n > 0 { "+" } else { "-" };
        format!("{first}{dot}{rest}e{sign}{}", (n - 1).abs())
    };
    if value < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

/// `time` as JavaScript's `Date.prototype.toISOString` writes it (the seed's output):
/// `2025-06-18T09:05:03.042Z`, UTC, milliseconds.
pub(crate) fn iso_timestamp(time: SystemTime) -> String {
    let (seconds, millis) = match time.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_millis()),
        Err(e) => {
            // Before 1970: count back, keeping the milliseconds non-negative.
            let d = e.duration();
            let total = -(d.as_millis() as i64);
            (total.div_euclid(1000), total.rem_euclid(1000) as u32)
        }
    };
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March first
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn numbers_print_as_javascript_does() {
        let table: &[(f64, &str)] = &[
            (14.0, "14"),
            (-4.0, "-4"),
            (0.5, "0.5"),
            (-0.0, "0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1500.0, "1500"),
            (123.456, "123.456"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (1e20, "100000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-2.5e-8, "-2.5e-8"),
            (f64::MAX, "1.7976931348623157e+308"),
        ];
        for (value, text) in table {
            assert_eq!(format_number(*value), *text, "{value:e}");
        }
    }

    #[test]
    fn timestamps_are_iso_8601_with_milliseconds() {
        let at = |ms: u64| iso_timestamp(UNIX_EPOCH + Duration::from_millis(ms));
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(1_750_237_503_042), "2025-06-18T09:05:03.042Z");
        assert_eq!(at(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
        assert_eq!(
            iso_timestamp(UNIX_EPOCH - Duration::from_millis(1)),
            "1969-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn calculate_reports_like_the_seed() {
        let text =
            |r: &CallToolResult| serde_json::to_value(&r.content).unwrap()[0]["text"].clone();
        let ok = calculate("2 + 3 * 4");
        assert_eq!(text(&ok), "14");
        assert_ne!(ok.is_error, Some(true));
        let failed = calculate("");
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(text(&failed), "Error: expression is required");
    }
}
