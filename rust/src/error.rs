//! The one error type of the core. Each variant maps to one Python exception class in
//! `shotbridge.wire.errors` (see `python.rs`), so callers can tell *why* an image was refused.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// No bytes at all (or a data URL with an empty payload).
    Empty(String),
    /// A data URL / base64 string that does not decode.
    Base64(String),
    /// Not PNG or JPEG.
    UnknownFormat(String),
    /// Truncated or corrupt PNG/JPEG data.
    Corrupt(String),
    /// Over the pixel or side limits: refused before decoding.
    TooLarge(String),
    /// Invalid options (a caller bug): surfaces as a plain `ValueError`.
    Options(String),
    /// A bug in the core (includes caught panics).
    Internal(String),
}

impl CoreError {
    pub fn message(&self) -> &str {
        match self {
            CoreError::Empty(m)
            | CoreError::Base64(m)
            | CoreError::UnknownFormat(m)
            | CoreError::Corrupt(m)
            | CoreError::TooLarge(m)
            | CoreError::Options(m)
            | CoreError::Internal(m) => m,
        }
    }
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for CoreError {}

pub type Result<T> = std::result::Result<T, CoreError>;
