//! Client authentication: one shared secret, checked once per connection at the websocket handshake.
//!
//! A client presents the token either as `?token=...` in the URL (what stock rosbridge clients such as
//! roslibpy can do) or as an `Authorization: Bearer ...` header (which keeps it out of URLs and proxy
//! logs). The comparison takes the same time whatever the bytes, so response times do not reveal how much
//! of a guess was right; only a wrong length is rejected at once, and a length is not a secret worth
//! guarding. A [`Token`] never prints its secret (`Debug` shows `Token(<redacted>)`).
//!
//! The operator supplies the token on the command line (visible in `ps`), in the `AVGUARD_TOKEN`
//! environment variable, or in a file (`--token-file`); see `tools/src/cmd/bridge.rs`.

use std::fmt;
use std::path::Path;

use subtle::{Choice, ConstantTimeEq};
use tokio_tungstenite::tungstenite::handshake::server::Request;

/// Longest accepted token, bytes.
pub const MAX_TOKEN_BYTES: usize = 4096;

/// The shared secret clients must present.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

/// Why a token cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token file could not be read.
    #[error("{path}: cannot read the token file: {source}")]
    Read {
        /// The file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The token is empty, too long, or has characters a URL query cannot carry unescaped.
    #[error("{origin}: {problem}")]
    Invalid {
        /// Where the token came from (flag, variable or file).
        origin: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl Token {
    /// Checks a token given as text; `origin` names its source in errors (e.g. `--token`).
    ///
    /// # Errors
    /// [`TokenError::Invalid`] when it is empty, longer than [`MAX_TOKEN_BYTES`], or has a character
    /// outside `A-Z a-z 0-9 - . _ ~` (the characters a URL carries unescaped).
    pub fn new(secret: &str, origin: &str) -> Result<Token, TokenError> {
        let invalid = |problem: String| TokenError::Invalid {
            origin: origin.to_owned(),
            problem,
        };
        if secret.is_empty() {
            return Err(invalid("the token is empty".into()));
        }
        if secret.len() > MAX_TOKEN_BYTES {
            return Err(invalid(format!(
                "the token has {} bytes, more than the limit of {MAX_TOKEN_BYTES}",
                secret.len()
            )));
        }
        if let Some(bad) = secret
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')))
        {
            return Err(invalid(format!(
                "the token has the character {bad:?}; use only A-Z a-z 0-9 - . _ ~ (e.g. `openssl rand -hex 32`)"
            )));
        }
        Ok(Token(secret.to_owned()))
    }

    /// Reads a token file: its whole text, without the trailing line break.
    ///
    /// # Errors
    /// [`TokenError::Read`] when the file cannot be read, [`TokenError::Invalid`] as for [`Token::new`].
    pub fn from_file(path: &Path) -> Result<Token, TokenError> {
        let label = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TokenError::Read {
            path: label.clone(),
            source,
        })?;
        Token::new(text.trim_end_matches(['\n', '\r']), &label)
    }

    /// Whether `candidate` is the token, in time independent of where they differ.
    pub fn matches(&self, candidate: &str) -> bool {
        bool::from(self.0.as_bytes().ct_eq(candidate.as_bytes()))
    }

    /// Whether a handshake request carries the token, in its query or an `Authorization: Bearer` header.
    /// Every candidate is compared, so the time taken does not depend on which one (if any) matched.
    pub fn admits(&self, req: &Request) -> bool {
        let mut found = Choice::from(0);
        for value in req.uri().query().unwrap_or("").split('&') {
            if let Some(candidate) = value.strip_prefix("token=") {
                found |= self.0.as_bytes().ct_eq(candidate.as_bytes());
            }
        }
        for header in req.headers().get_all("authorization") {
            let bearer = header.to_str().ok().and_then(|h| h.strip_prefix("Bearer "));
            if let Some(candidate) = bearer {
                found |= self.0.as_bytes().ct_eq(candidate.trim().as_bytes());
            }
        }
        bool::from(found)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(uri: &str, bearer: Option<&str>) -> Request {
        let mut b = Request::builder().uri(uri);
        if let Some(t) = bearer {
            b = b.header("Authorization", format!("Bearer {t}"));
        }
        b.body(()).unwrap()
    }

    #[test]
    fn query_or_bearer_header_is_admitted_and_nothing_else() {
        let token = Token::new("s3cret-Token_1.0~", "--token").unwrap();
        assert!(token.admits(&request("/?token=s3cret-Token_1.0~", None)));
        assert!(token.admits(&request("/?a=1&token=wrong&token=s3cret-Token_1.0~", None)));
        assert!(token.admits(&request("/", Some("s3cret-Token_1.0~"))));
        assert!(!token.admits(&request("/", None)));
        assert!(!token.admits(&request("/?token=s3cret-Token_1.0", None)));
        assert!(!token.admits(&request("/?token=s3cret-Token_1.0~x", None)));
        assert!(!token.admits(&request("/?xtoken=s3cret-Token_1.0~", None)));
        assert!(!token.admits(&request("/", Some("nope"))));
    }

    #[test]
    fn bad_tokens_are_refused_with_their_origin() {
        let err = |s: &str| Token::new(s, "AVGUARD_TOKEN").unwrap_err().to_string();
        assert_eq!(err(""), "AVGUARD_TOKEN: the token is empty");
        assert!(err("a b").contains("the character ' '"), "{}", err("a b"));
        assert!(err("a&token=b").contains("'&'"));
        assert!(err(&"x".repeat(MAX_TOKEN_BYTES + 1)).contains("more than the limit of 4096"));
    }

    #[test]
    fn token_files_drop_the_line_break_and_never_print_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "abc123\n").unwrap();
        let token = Token::from_file(&path).unwrap();
        assert!(token.matches("abc123"));
        assert!(!token.matches("abc123\n"));
        assert_eq!(format!("{token:?}"), "Token(<redacted>)");
        let missing = Token::from_file(&dir.path().join("none")).unwrap_err();
        assert!(missing.to_string().contains("cannot read the token file"));
    }
}
