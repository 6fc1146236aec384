//! Byte budget: the encoded image must fit `max_bytes`, always.
//!
//! 1. Encode at the requested quality, fast (standard Huffman tables). Fits: done. Else the
//!    same with optimized tables (`Effort::Small`, which every later attempt uses too).
//! 2. Otherwise binary-search the highest quality in [min_quality, quality) that fits
//!    (at most ~log2(range) + 1 extra encodes).
//! 3. If even min_quality is too big, shrink the image (aspect kept) at min_quality, guessing
//!    the next scale from how far over budget the last attempt was (bytes ~ pixel count),
//!    until it fits. A 1x1 JPEG is ~300 bytes and budgets below `MIN_MAX_BYTES` are refused,
//!    so this always terminates.

use crate::encode::Effort;
use crate::error::{CoreError, Result};
use crate::geometry::scaled;

#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub bytes: Vec<u8>,
    pub quality: u8,
    /// Size actually encoded.
    pub size: (u32, u32),
    /// Output width / full width (1.0 unless step 3 ran).
    pub scale: f64,
    /// Quality or size had to be lowered.
    pub downgraded: bool,
}

/// At most this many shrink steps (each at least 5 % smaller; in practice 1-2 run).
const MAX_SHRINK_STEPS: usize = 200;

/// `encode(size, quality, effort)` renders the image at `size` and encodes it.
pub fn fit<F>(
    full: (u32, u32),
    quality: u8,
    min_quality: u8,
    max_bytes: usize,
    mut encode: F,
) -> Result<Fitted>
where
    F: FnMut((u32, u32), u8, Effort) -> Result<Vec<u8>>,
{
    let done = |bytes, quality, size: (u32, u32), downgraded| Fitted {
        bytes,
        quality,
        size,
        // From the long edge: on a 3 px wide strip the width cannot show a 5% shrink.
        scale: f64::from(size.0.max(size.1)) / f64::from(full.0.max(full.1)),
        downgraded,
    };
    let first = encode(full, quality, Effort::Fast)?;
    if first.len() <= max_bytes {
        return Ok(done(first, quality, full, false));
    }
    let mut encode = |size, q| encode(size, q, Effort::Small);
    let first = encode(full, quality)?;
    if first.len() <= max_bytes {
        return Ok(done(first, quality, full, false));
    }
    // 2. Quality search at full size.
    let mut smallest = first.len();
    if min_quality < quality {
        let at_min = encode(full, min_quality)?;
        smallest = at_min.len();
        if at_min.len() <= max_bytes {
            let (mut lo, mut hi, mut best) = (min_quality, quality, at_min);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                let bytes = encode(full, mid)?;
                if bytes.len() <= max_bytes {
                    lo = mid;
                    best = bytes;
                } else {
                    hi = mid;
                }
            }
            return Ok(done(best, lo, full, true));
        }
    }
    // 3. Shrink at min_quality.
    let mut factor = 1.0f64;
    let mut size = full;
    for _ in 0..MAX_SHRINK_STEPS {
        let step = ((max_bytes as f64 / smallest as f64).sqrt() * 0.95).clamp(0.05, 0.95);
        factor *= step;
        let mut next = scaled(full.0, full.1, factor);
        while next == size && size != (1, 1) {
            // Rounding stalled at a small size: keep shrinking the factor (aspect kept).
            factor *= 0.95;
            next = scaled(full.0, full.1, factor);
        }
        size = next;
        let bytes = encode(size, min_quality)?;
        if bytes.len() <= max_bytes {
            return Ok(done(bytes, min_quality, size, true));
        }
        smallest = bytes.len();
        if size == (1, 1) {
            break;
        }
    }
    Err(CoreError::Internal(format!(
        "could not fit the image in {max_bytes} bytes (last attempt {smallest} bytes)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake encoder: bytes grow with pixels and quality, plus fixed headers.
    /// Fast encodes are 10 % bigger, as standard Huffman tables are.
    fn fake(size: (u32, u32), q: u8, effort: Effort) -> Result<Vec<u8>> {
        let px = f64::from(size.0) * f64::from(size.1);
        let bytes = 300.0 + px * f64::from(q) / 40.0;
        let k = if effort == Effort::Fast { 1.1 } else { 1.0 };
        Ok(vec![0; (bytes * k) as usize])
    }

    #[test]
    fn fits_without_downgrade() {
        let f = fit((100, 100), 60, 30, 500_000, fake).unwrap();
        assert_eq!(
            (f.quality, f.size, f.downgraded, f.scale),
            (60, (100, 100), false, 1.0)
        );
    }

    #[test]
    fn optimized_tables_before_a_lower_quality() {
        // q60 fast: 300 + 23040 * 60 * 1.1 = 1,520,940 bytes; optimized: 1,382,700.
        let mut efforts = Vec::new();
        let f = fit((1280, 720), 60, 30, 1_400_000, |s, q, e| {
            efforts.push(e);
            fake(s, q, e)
        })
        .unwrap();
        assert_eq!((f.quality, f.downgraded), (60, false));
        assert_eq!(efforts, [Effort::Fast, Effort::Small]);
    }

    #[test]
    fn quality_search_finds_highest_fitting_quality() {
        // 1280x720 at q -> 300 + 23040 * q bytes; budget 1M -> q = 43.
        let mut calls = 0;
        let f = fit((1280, 720), 60, 30, 1_000_000, |s, q, e| {
            calls += 1;
            fake(s, q, e)
        })
        .unwrap();
        assert_eq!((f.quality, f.size, f.downgraded), (43, (1280, 720), true));
        assert!(f.bytes.len() <= 1_000_000);
        assert!(calls <= 9, "{calls} encodes");
    }

    #[test]
    fn shrinks_when_min_quality_is_not_enough() {
        let f = fit((1280, 720), 60, 30, 100_000, fake).unwrap();
        assert_eq!(f.quality, 30);
        assert!(f.bytes.len() <= 100_000);
        assert!(f.scale < 1.0 && f.downgraded);
        let aspect = f64::from(f.size.0) / f64::from(f.size.1);
        assert!((aspect - 1280.0 / 720.0).abs() < 0.02);
    }

    #[test]
    fn tiny_budget_still_terminates() {
        let f = fit((7680, 4320), 60, 30, 2_000, fake).unwrap();
        assert!(f.bytes.len() <= 2_000);
        let f = fit((1, 16384), 90, 90, 2_000, fake).unwrap();
        assert!(f.bytes.len() <= 2_000);
    }

    #[test]
    fn impossible_budget_is_an_error_not_a_hang() {
        assert!(fit((10, 10), 60, 30, 100, fake).is_err());
    }
}
