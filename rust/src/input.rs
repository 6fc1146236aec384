//! Turn what the caller handed us (raw bytes, a `data:` URL, bare base64) into encoded image
//! bytes. Base64 is decoded here, in Rust, with the GIL released.

use std::borrow::Cow;

use base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT;
use base64::Engine as _;

use crate::error::{CoreError, Result};

/// What the Python layer passes in.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    Bytes(&'a [u8]),
    /// A `data:image/...;base64,` URL or a bare base64 string.
    Text(&'a str),
}

/// The encoded image bytes (borrowed when the input already was raw bytes).
pub fn image_bytes(input: Input<'_>) -> Result<Cow<'_, [u8]>> {
    let bytes = match input {
        Input::Bytes(b) if is_data_url(b) => Cow::Owned(decode_data_url(b)?),
        Input::Bytes(b) => Cow::Borrowed(b),
        Input::Text(s) if is_data_url(s.as_bytes()) => Cow::Owned(decode_data_url(s.as_bytes())?),
        Input::Text(s) => Cow::Owned(decode_base64(s.as_bytes())?),
    };
    if bytes.is_empty() {
        return Err(CoreError::Empty("empty input: no image bytes".into()));
    }
    Ok(bytes)
}

fn is_data_url(b: &[u8]) -> bool {
    b.len() >= 5 && b[..5].eq_ignore_ascii_case(b"data:")
}

fn decode_data_url(url: &[u8]) -> Result<Vec<u8>> {
    let comma = url
        .iter()
        .position(|&c| c == b',')
        .ok_or_else(|| CoreError::Base64("data URL has no ',' before its payload".into()))?;
    let meta = &url[5..comma];
    let is_base64 = meta.len() >= 7 && meta[meta.len() - 7..].eq_ignore_ascii_case(b";base64");
    if !is_base64 {
        return Err(CoreError::Base64(
            "data URL is not base64-encoded (expected ';base64,')".into(),
        ));
    }
    decode_base64(&url[comma + 1..])
}

fn decode_base64(text: &[u8]) -> Result<Vec<u8>> {
    // Data URLs copied from logs or HTML may be wrapped; only strip whitespace when present so
    // the common case decodes straight from the caller's buffer.
    let cleaned: Cow<'_, [u8]> = if text.iter().any(u8::is_ascii_whitespace) {
        Cow::Owned(
            text.iter()
                .copied()
                .filter(|c| !c.is_ascii_whitespace())
                .collect(),
        )
    } else {
        Cow::Borrowed(text)
    };
    if cleaned.is_empty() {
        return Err(CoreError::Empty(
            "empty input: the base64 payload is empty".into(),
        ));
    }
    STANDARD_PAD_INDIFFERENT
        .decode(&*cleaned)
        .map_err(|e| CoreError::Base64(format!("invalid base64: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_url_and_bare_base64() {
        let url = "data:image/png;base64,AAEC";
        assert_eq!(&*image_bytes(Input::Text(url)).unwrap(), &[0, 1, 2]);
        assert_eq!(&*image_bytes(Input::Text("AAEC")).unwrap(), &[0, 1, 2]);
        assert_eq!(
            &*image_bytes(Input::Bytes(url.as_bytes())).unwrap(),
            &[0, 1, 2]
        );
        assert_eq!(&*image_bytes(Input::Text("AA\nEC")).unwrap(), &[0, 1, 2]);
    }

    #[test]
    fn errors() {
        assert!(matches!(
            image_bytes(Input::Bytes(b"")),
            Err(CoreError::Empty(_))
        ));
        assert!(matches!(
            image_bytes(Input::Text("data:image/png;base64,")),
            Err(CoreError::Empty(_))
        ));
        assert!(matches!(
            image_bytes(Input::Text("data:image/png;base64,@@@")),
            Err(CoreError::Base64(_))
        ));
        assert!(matches!(
            image_bytes(Input::Text("data:text/plain,hi")),
            Err(CoreError::Base64(_))
        ));
    }
}
