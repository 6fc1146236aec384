//! Hard limits of the core, checked before any large allocation.

use crate::error::{CoreError, Result};

/// Decompression-bomb guard: more pixels than this are refused from the header alone.
pub const MAX_PIXELS: u64 = 100_000_000;
/// Longest accepted side, in pixels.
pub const MAX_SIDE: u64 = 32_768;
/// Smallest accepted byte budget (main image or thumbnail). A 1x1 JPEG with optimized Huffman
/// tables is ~300 bytes, so any budget at or above this can always be met.
pub const MIN_MAX_BYTES: usize = 2_000;
/// At most this many boxes are labelled; later ones are ignored (and reported as such).
pub const MAX_BADGES: usize = 500;
/// At most this many page-text rects steer badge placement; later ones are ignored.
pub const MAX_TEXT_RECTS: usize = 2_000;
/// Quality bounds accepted for the encoder.
pub const MIN_QUALITY: u8 = 1;
pub const MAX_QUALITY: u8 = 100;

/// Refuse images whose header claims a size we will not allocate for.
pub fn check_dimensions(width: u64, height: u64) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(CoreError::Corrupt(format!(
            "image header claims an empty size {width}x{height}"
        )));
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(CoreError::TooLarge(format!(
            "image is {width}x{height}: a side is over the {MAX_SIDE} px limit"
        )));
    }
    let pixels = width * height;
    if pixels > MAX_PIXELS {
        return Err(CoreError::TooLarge(format!(
            "image is {width}x{height} = {:.1} megapixels, over the {} megapixel limit",
            pixels as f64 / 1e6,
            MAX_PIXELS / 1_000_000
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bomb_sizes_are_refused() {
        assert!(matches!(
            check_dimensions(40_000, 40_000),
            Err(CoreError::TooLarge(_))
        ));
        assert!(matches!(
            check_dimensions(20_000, 20_000),
            Err(CoreError::TooLarge(_))
        ));
        assert!(matches!(
            check_dimensions(32_769, 10),
            Err(CoreError::TooLarge(_))
        ));
        assert!(matches!(
            check_dimensions(0, 10),
            Err(CoreError::Corrupt(_))
        ));
    }

    #[test]
    fn limits_are_inclusive() {
        assert!(check_dimensions(10_000, 10_000).is_ok()); // exactly 100 MP
        assert!(check_dimensions(32_768, 3_000).is_ok());
        assert!(check_dimensions(1, 32_768).is_ok());
        assert!(check_dimensions(10_000, 10_001).is_err());
    }
}
