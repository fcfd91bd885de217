//! Splits a law text into tokens with their line and column.
//!
//! Identifiers may contain dots between segments (`trafficLightAhead.color`); a dot followed by an operator
//! character starts LawBreaker's dotted arithmetic (`.+`). `hh:mm` is a time literal in hours. `//` and
//! `/* */` comments are skipped.

use super::atom::{ArithOp, Cmp};
use super::error::ParseError;
use super::limits::MAX_TEXT_BYTES;

/// A token kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A name, possibly dotted.
    Ident(String),
    /// A number (or a `hh:mm` time in hours).
    Num(f64),
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `,`
    Comma,
    /// `;`
    Semi,
    /// `=`
    Assign,
    /// A comparison.
    Cmp(Cmp),
    /// Dotted arithmetic.
    Arith(ArithOp),
    /// `~`
    Not,
    /// `&`
    And,
    /// `|`
    Or,
    /// `->`
    Implies,
    /// End of text.
    Eof,
}

/// A name or text as an error message shows it: in single quotes, control and invisible characters
/// escaped (`\u{feff}`), and cut after 60 characters with its length in bytes (an identifier of the file
/// may be as long as the file).
pub fn quoted(s: &str) -> String {
    let mut out = String::from("'");
    for ch in s.chars().take(60) {
        if ch.is_control() || matches!(ch, '\u{200b}'..='\u{200f}' | '\u{feff}') {
            out.extend(ch.escape_unicode());
        } else {
            out.push(ch);
        }
    }
    out.push('\'');
    if s.chars().nth(60).is_some() {
        out.push_str(&format!("… ({} bytes)", s.len()));
    }
    out
}

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => quoted(s),
            Tok::Num(n) => format!("number {n}"),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::LBracket => "'['".into(),
            Tok::RBracket => "']'".into(),
            Tok::Comma => "','".into(),
            Tok::Semi => "';'".into(),
            Tok::Assign => "'='".into(),
            Tok::Cmp(c) => format!("'{}'", c.as_str()),
            Tok::Arith(a) => format!("'{}'", a.as_str()),
            Tok::Not => "'~'".into(),
            Tok::And => "'&'".into(),
            Tok::Or => "'|'".into(),
            Tok::Implies => "'->'".into(),
            Tok::Eof => "end of text".into(),
        }
    }
}

/// A token with its position (1-based line and column) and byte offset.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Byte offset of its first character.
    pub offset: usize,
}

struct Cursor<'a> {
    chars: Vec<(usize, char)>,
    i: usize,
    line: usize,
    col: usize,
    file: &'a str,
}

impl Cursor<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).map(|&(_, c)| c)
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
    fn offset(&self, len: usize) -> usize {
        self.chars.get(self.i).map_or(len, |&(o, _)| o)
    }
    fn error(&self, line: usize, col: usize, message: String) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            line,
            col,
            message,
        }
    }
}

/// Tokenises `text`; the last token is always [`Tok::Eof`].
pub fn lex(file: &str, text: &str) -> Result<Vec<Token>, ParseError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(ParseError {
            file: file.to_string(),
            line: 1,
            col: 1,
            message: format!(
                "law text of {} bytes exceeds the limit of {MAX_TEXT_BYTES} bytes",
                text.len()
            ),
        });
    }
    // A byte-order mark that some editors put first is no part of the text.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut c = Cursor {
        chars: text.char_indices().collect(),
        i: 0,
        line: 1,
        col: 1,
        file,
    };
    let mut out = Vec::new();
    loop {
        // Whitespace and comments.
        match (c.peek(0), c.peek(1)) {
            (Some(ch), _) if ch.is_whitespace() => {
                c.bump();
                continue;
            }
            (Some('/'), Some('/')) => {
                while c.peek(0).is_some_and(|ch| ch != '\n') {
                    c.bump();
                }
                continue;
            }
            (Some('/'), Some('*')) => {
                let (line, col) = (c.line, c.col);
                c.bump();
                c.bump();
                loop {
                    match (c.peek(0), c.peek(1)) {
                        (Some('*'), Some('/')) => {
                            c.bump();
                            c.bump();
                            break;
                        }
                        (Some(_), _) => {
                            c.bump();
                        }
                        (None, _) => {
                            return Err(c.error(line, col, "unterminated '/*' comment".into()))
                        }
                    }
                }
                continue;
            }
            _ => {}
        }
        let (line, col, offset) = (c.line, c.col, c.offset(text.len()));
        let Some(ch) = c.peek(0) else {
            out.push(Token {
                tok: Tok::Eof,
                line,
                col,
                offset,
            });
            return Ok(out);
        };
        let next = c.peek(1);
        let tok = if ch.is_ascii_alphabetic() || ch == '_' {
            let mut s = String::new();
            loop {
                while let Some(ch) = c
                    .peek(0)
                    .filter(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
                {
                    s.push(ch);
                    c.bump();
                }
                if c.peek(0) == Some('.') && c.peek(1).is_some_and(|ch| ch.is_ascii_alphabetic()) {
                    s.push('.');
                    c.bump();
                } else {
                    break;
                }
            }
            Tok::Ident(s)
        } else if ch.is_ascii_digit() || (ch == '-' && next.is_some_and(|d| d.is_ascii_digit())) {
            lex_number(&mut c, line, col)?
        } else {
            c.bump();
            let two = |c: &mut Cursor<'_>, t: Tok| {
                c.bump();
                t
            };
            match (ch, next) {
                ('(', _) => Tok::LParen,
                (')', _) => Tok::RParen,
                ('[', _) => Tok::LBracket,
                (']', _) => Tok::RBracket,
                (',', _) => Tok::Comma,
                (';', _) => Tok::Semi,
                ('~', _) => Tok::Not,
                ('&', Some('&')) => two(&mut c, Tok::And),
                ('&', _) => Tok::And,
                ('|', Some('|')) => two(&mut c, Tok::Or),
                ('|', _) => Tok::Or,
                ('-', Some('>')) => two(&mut c, Tok::Implies),
                ('=', Some('=')) => two(&mut c, Tok::Cmp(Cmp::Eq)),
                ('=', _) => Tok::Assign,
                ('!', Some('=')) => two(&mut c, Tok::Cmp(Cmp::Ne)),
                ('<', Some('=')) => two(&mut c, Tok::Cmp(Cmp::Le)),
                ('<', _) => Tok::Cmp(Cmp::Lt),
                ('>', Some('=')) => two(&mut c, Tok::Cmp(Cmp::Ge)),
                ('>', _) => Tok::Cmp(Cmp::Gt),
                ('.', Some('+')) => two(&mut c, Tok::Arith(ArithOp::Add)),
                ('.', Some('-')) => two(&mut c, Tok::Arith(ArithOp::Sub)),
                ('.', Some('*')) => two(&mut c, Tok::Arith(ArithOp::Mul)),
                ('.', Some('/')) => two(&mut c, Tok::Arith(ArithOp::Div)),
                _ => {
                    return Err(c.error(
                        line,
                        col,
                        format!("unexpected character {}", quoted(&ch.to_string())),
                    ))
                }
            }
        };
        out.push(Token {
            tok,
            line,
            col,
            offset,
        });
    }
}

fn lex_number(c: &mut Cursor<'_>, line: usize, col: usize) -> Result<Tok, ParseError> {
    let mut s = String::new();
    if c.peek(0) == Some('-') {
        s.push('-');
        c.bump();
    }
    while let Some(ch) = c.peek(0).filter(|ch| ch.is_ascii_digit() || *ch == '.') {
        // A dot followed by an operator is dotted arithmetic, not a decimal point.
        if ch == '.' && !c.peek(1).is_some_and(|d| d.is_ascii_digit()) {
            break;
        }
        s.push(ch);
        c.bump();
    }
    let value: f64 = s
        .parse()
        .map_err(|_| c.error(line, col, format!("malformed number {}", quoted(&s))))?;
    if !value.is_finite() {
        return Err(c.error(line, col, format!("number {} is too large", quoted(&s))));
    }
    if c.peek(0) == Some(':') && c.peek(1).is_some_and(|d| d.is_ascii_digit()) {
        c.bump();
        let mut m = String::new();
        while let Some(d) = c.peek(0).filter(|d| d.is_ascii_digit()) {
            m.push(d);
            c.bump();
        }
        let minutes: f64 = m
            .parse()
            .map_err(|_| c.error(line, col, format!("malformed time '{s}:{m}'")))?;
        if !(0.0..=24.0).contains(&value) || minutes >= 60.0 || m.len() != 2 || value.fract() != 0.0
        {
            return Err(c.error(
                line,
                col,
                format!("malformed time '{s}:{m}': expected hh:mm"),
            ));
        }
        return Ok(Tok::Num(value + minutes / 60.0));
    }
    Ok(Tok::Num(value))
}
