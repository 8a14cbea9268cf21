//! The `calculate` grammar: a recursive-descent evaluator over `f64`, on the tokens of
//! [`super::lexer`].
//!
//! Written by hand: the grammar is five precedence levels, small enough that a parser
//! generator or a parsing crate would be more code than it saves. It never hands the input
//! to anything that executes code. Grammar, loosest binding first:
//!
//! ```text
//! expression := term (("+" | "-") term)*
//! term       := unary (("*" | "/" | "%") unary)*
//! unary      := ("-" | "+") unary | power
//! power      := primary ("^" unary)?          right-associative: 2^3^2 = 2^9
//! primary    := number | "(" expression ")"
//! number     := digits ["." digits] [("e" | "E") ["+" | "-"] digits]   (or "." digits)
//! ```
//!
//! `^` binds tighter than a unary minus on its left (`-2^2` = -4, as in mathematics) and
//! accepts one on its right (`2^-1` = 0.5). `%` is the remainder with the dividend's sign
//! (as in C, Rust and JavaScript). Positions in errors count characters from 1.

use std::fmt;

use super::lexer::{Kind, Token, lex};

/// The deepest nesting of parentheses, unary signs and exponents accepted, so that a
/// hostile input cannot exhaust the stack.
pub(crate) const MAX_DEPTH: usize = 256;

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CalcError {
    /// What went wrong.
    pub(crate) message: String,
    /// Where (the 1-based character position), when it is one place.
    pub(crate) position: Option<usize>,
}

impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(position) => write!(f, "{} at position {position}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Evaluate `input`; every failure (syntax, division by zero, a non-finite result,
/// nesting deeper than [`MAX_DEPTH`]) is an error naming its position.
pub(crate) fn evaluate(input: &str) -> Result<f64, CalcError> {
    let tokens = lex(input)?;
    if tokens.len() == 1 {
        return Err(CalcError {
            message: "expression is required".into(),
            position: None,
        });
    }
    let mut parser = Parser {
        tokens,
        next: 0,
        depth: 0,
    };
    let value = parser.expression()?;
    let token = parser.peek();
    match token.kind {
        Kind::End => Ok(value),
        Kind::RParen => Err(error(token.position, "unmatched ')'")),
        _ => Err(error(
            token.position,
            format!("unexpected {} after a complete expression", token.kind),
        )),
    }
}

/// An error at `position`.
pub(super) fn error(position: usize, message: impl Into<String>) -> CalcError {
    CalcError {
        message: message.into(),
        position: Some(position),
    }
}

/// The recursive-descent evaluator: one method per grammar rule.
struct Parser {
    /// The tokens, ending with [`Kind::End`].
    tokens: Vec<Token>,
    /// The index of the next token.
    next: usize,
    /// The current nesting of parentheses, unary signs and exponents.
    depth: usize,
}

impl Parser {
    /// The next token, not consumed (the last token is `End`, which is never consumed).
    fn peek(&self) -> Token {
        self.tokens[self.next.min(self.tokens.len() - 1)]
    }

    /// Consume the next token.
    fn advance(&mut self) -> Token {
        let token = self.peek();
        if token.kind != Kind::End {
            self.next += 1;
        }
        token
    }

    /// Enter one level of nesting at `position`, refusing beyond [`MAX_DEPTH`].
    fn enter(&mut self, position: usize) -> Result<(), CalcError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(error(
                position,
                format!("expression nested too deeply (limit {MAX_DEPTH})"),
            ));
        }
        Ok(())
    }

    /// `expression := term (("+" | "-") term)*`
    fn expression(&mut self) -> Result<f64, CalcError> {
        let mut value = self.term()?;
        loop {
            let op = self.peek();
            value = match op.kind {
                Kind::Plus => {
                    self.advance();
                    finite(value + self.term()?, op.position)?
                }
                Kind::Minus => {
                    self.advance();
                    finite(value - self.term()?, op.position)?
                }
                _ => return Ok(value),
            };
        }
    }

    /// `term := unary (("*" | "/" | "%") unary)*`
    fn term(&mut self) -> Result<f64, CalcError> {
        let mut value = self.unary()?;
        loop {
            let op = self.peek();
            value = match op.kind {
                Kind::Star => {
                    self.advance();
                    finite(value * self.unary()?, op.position)?
                }
                Kind::Slash | Kind::Percent => {
                    self.advance();
                    let divisor = self.unary()?;
                    if divisor == 0.0 {
                        let what = if op.kind == Kind::Slash {
                            "division by zero"
                        } else {
                            "modulo by zero"
                        };
                        return Err(error(op.position, what));
                    }
                    let result = if op.kind == Kind::Slash {
                        value / divisor
                    } else {
                        value % divisor
                    };
                    finite(result, op.position)?
                }
                _ => return Ok(value),
            };
        }
    }

    /// `unary := ("-" | "+") unary | power`
    fn unary(&mut self) -> Result<f64, CalcError> {
        let token = self.peek();
        match token.kind {
            Kind::Minus | Kind::Plus => {
                self.advance();
                self.enter(token.position)?;
                let operand = self.unary()?;
                self.depth -= 1;
                Ok(if token.kind == Kind::Minus {
                    -operand
                } else {
                    operand
                })
            }
            _ => self.power(),
        }
    }

    /// `power := primary ("^" unary)?`: the right operand is parsed by `unary`, which
    /// comes back here, so `^` is right-associative.
    fn power(&mut self) -> Result<f64, CalcError> {
        let base = self.primary()?;
        let op = self.peek();
        if op.kind != Kind::Caret {
            return Ok(base);
        }
        self.advance();
        self.enter(op.position)?;
        let exponent = self.unary()?;
        self.depth -= 1;
        finite(base.powf(exponent), op.position)
    }

    /// `primary := number | "(" expression ")"`
    fn primary(&mut self) -> Result<f64, CalcError> {
        let token = self.advance();
        match token.kind {
            Kind::Number(value) => Ok(value),
            Kind::LParen => {
                self.enter(token.position)?;
                let value = self.expression()?;
                let close = self.advance();
                if close.kind != Kind::RParen {
                    return Err(error(
                        close.position,
                        format!(
                            "expected ')' to close the '(' at position {}, found {}",
                            token.position, close.kind
                        ),
                    ));
                }
                self.depth -= 1;
                Ok(value)
            }
            other => Err(error(
                token.position,
                format!("expected a number or '(', found {other}"),
            )),
        }
    }
}

/// `value`, or an error at the operator's `position` when it is infinite or NaN.
fn finite(value: f64, position: usize) -> Result<f64, CalcError> {
    if value.is_nan() {
        Err(error(position, "the result is not a real number"))
    } else if value.is_infinite() {
        Err(error(
            position,
            "overflow: the result is not a finite number",
        ))
    } else {
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of `input`, which must have one.
    fn ok(input: &str) -> f64 {
        evaluate(input).unwrap_or_else(|e| panic!("{input:?}: {e}"))
    }

    /// The error message of `input`, which must fail.
    fn err(input: &str) -> String {
        match evaluate(input) {
            Ok(v) => panic!("{input:?} evaluated to {v}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn precedence_and_associativity() {
        let table: &[(&str, f64)] = &[
            ("2 + 3 * 4", 14.0),
            ("(2 + 3) * 4", 20.0),
            ("10 - 4 - 3", 3.0),
            ("100 / 10 / 5", 2.0),
            ("2 ^ 3 ^ 2", 512.0),
            ("(2 ^ 3) ^ 2", 64.0),
            ("-2 ^ 2", -4.0),
            ("(-2) ^ 2", 4.0),
            ("2 ^ -1", 0.5),
            ("2 * -3", -6.0),
            ("--3", 3.0),
            ("+-+3", -3.0),
            ("7 % 4", 3.0),
            ("-7 % 4", -3.0),
            ("7.5 % 2", 1.5),
            ("2 + 3 % 2 * 4", 6.0),
            ("1 - -1", 2.0),
        ];
        for (input, expected) in table {
            assert_eq!(ok(input), *expected, "{input}");
        }
    }

    #[test]
    fn numbers_and_whitespace() {
        assert_eq!(ok("1.5e3"), 1500.0);
        assert_eq!(ok("2E-2"), 0.02);
        assert_eq!(ok("1e+2"), 100.0);
        assert_eq!(ok(".5 + 5."), 5.5);
        assert_eq!(ok(" \t 42 \n"), 42.0);
        assert_eq!(ok("0.1 + 0.2"), 0.1 + 0.2);
    }

    #[test]
    fn errors_name_their_position() {
        let table: &[(&str, &str)] = &[
            ("", "expression is required"),
            ("   ", "expression is required"),
            ("1 / 0", "division by zero at position 3"),
            ("1 % (2 - 2)", "modulo by zero at position 3"),
            (
                "2 +",
                "expected a number or '(', found end of expression at position 4",
            ),
            (
                "2 * * 3",
                "expected a number or '(', found '*' at position 5",
            ),
            (
                "(1 + 2",
                "expected ')' to close the '(' at position 1, found end of expression at position 7",
            ),
            ("1 + 2)", "unmatched ')' at position 6"),
            (
                "2 3",
                "unexpected number 3 after a complete expression at position 3",
            ),
            (
                "2 (3)",
                "unexpected '(' after a complete expression at position 3",
            ),
            ("2 + x", "unexpected character 'x' at position 5"),
            ("1e", "an exponent needs digits at position 2"),
            (".", "a '.' must belong to a number at position 1"),
            ("1e999", "number 1e999 is out of range at position 1"),
            (
                "1e308 * 10",
                "overflow: the result is not a finite number at position 7",
            ),
            (
                "10 ^ 400",
                "overflow: the result is not a finite number at position 4",
            ),
            (
                "0 ^ -1",
                "overflow: the result is not a finite number at position 3",
            ),
            (
                "(-8) ^ 0.5",
                "the result is not a real number at position 6",
            ),
        ];
        for (input, expected) in table {
            assert_eq!(err(input), *expected, "{input:?}");
        }
    }

    #[test]
    fn nesting_is_limited() {
        let fine = format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(ok(&fine), 1.0);
        let deep = format!(
            "{}1{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert!(err(&deep).contains("nested too deeply"), "{}", err(&deep));
        let signs = format!("{}1", "-".repeat(100_000));
        assert!(err(&signs).contains("nested too deeply"));
        let powers = format!("{}2", "2^".repeat(100_000));
        assert!(err(&powers).contains("nested too deeply"));
    }
}
