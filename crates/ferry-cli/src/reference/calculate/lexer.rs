//! The tokens of the `calculate` grammar ([`super::parser`]), with their positions.

use std::fmt;

use super::parser::{CalcError, error};

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    /// A number literal, already converted.
    Number(f64),
    /// `+`.
    Plus,
    /// `-`.
    Minus,
    /// `*`.
    Star,
    /// `/`.
    Slash,
    /// `%`.
    Percent,
    /// `^`.
    Caret,
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// The end of the input.
    End,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let symbol = match self {
            Kind::Number(n) => return write!(f, "number {}", super::format_number(*n)),
            Kind::Plus => "+",
            Kind::Minus => "-",
            Kind::Star => "*",
            Kind::Slash => "/",
            Kind::Percent => "%",
            Kind::Caret => "^",
            Kind::LParen => "(",
            Kind::RParen => ")",
            Kind::End => return f.write_str("end of expression"),
        };
        write!(f, "'{symbol}'")
    }
}

/// A token and the 1-based character position where it starts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Token {
    /// What it is.
    pub(super) kind: Kind,
    /// Where it starts.
    pub(super) position: usize,
}

/// Split `input` into tokens, ending with [`Kind::End`].
pub(super) fn lex(input: &str) -> Result<Vec<Token>, CalcError> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let position = i + 1;
        let kind = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '0'..='9' | '.' => {
                let (value, end) = number(&chars, i)?;
                i = end;
                tokens.push(Token {
                    kind: Kind::Number(value),
                    position,
                });
                continue;
            }
            '+' => Kind::Plus,
            '-' => Kind::Minus,
            '*' => Kind::Star,
            '/' => Kind::Slash,
            '%' => Kind::Percent,
            '^' => Kind::Caret,
            '(' => Kind::LParen,
            ')' => Kind::RParen,
            other => {
                return Err(error(position, format!("unexpected character {other:?}")));
            }
        };
        tokens.push(Token { kind, position });
        i += 1;
    }
    tokens.push(Token {
        kind: Kind::End,
        position: chars.len() + 1,
    });
    Ok(tokens)
}

/// The number literal starting at `start`: its value and the index after it.
fn number(chars: &[char], start: usize) -> Result<(f64, usize), CalcError> {
    let digits_from = |mut i: usize| {
        while chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut end = digits_from(start);
    let mut has_digits = end > start;
    if chars.get(end) == Some(&'.') {
        let after = digits_from(end + 1);
        has_digits |= after > end + 1;
        end = after;
    }
    if !has_digits {
        return Err(error(start + 1, "a '.' must belong to a number"));
    }
    if matches!(chars.get(end), Some('e' | 'E')) {
        let mut i = end + 1;
        if matches!(chars.get(i), Some('+' | '-')) {
            i += 1;
        }
        let after = digits_from(i);
        if after == i {
            return Err(error(end + 1, "an exponent needs digits"));
        }
        end = after;
    }
    let text: String = chars[start..end].iter().collect();
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok((value, end)),
        _ => Err(error(start + 1, format!("number {text} is out of range"))),
    }
}
