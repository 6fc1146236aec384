//! Anti-aliased digit glyphs for the badges, rasterised once from an embedded font
//! (DejaVu Sans Bold, via the `dejavu` crate) and cached: no font work on the hot path.

use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

/// Font size of badge digits, in output pixels.
const FONT_PX: f32 = 12.0;

/// Coverage masks (0-255) of '0'..='9', all in cells of the same size sharing one baseline.
#[derive(Debug)]
pub struct Digits {
    pub cell_w: u32,
    pub cell_h: u32,
    /// Pen advance between digits (DejaVu digits are tabular: one advance for all).
    pub advance: u32,
    masks: Vec<Vec<u8>>,
}

impl Digits {
    pub fn coverage(&self, digit: u8) -> &[u8] {
        &self.masks[usize::from(digit)]
    }

    /// Width in pixels of `n` digits set side by side.
    pub fn text_width(&self, n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            (n - 1) * self.advance + self.cell_w
        }
    }
}

pub fn digits() -> &'static Digits {
    static DIGITS: OnceLock<Digits> = OnceLock::new();
    DIGITS.get_or_init(rasterise)
}

fn rasterise() -> Digits {
    let font = FontRef::try_from_slice(dejavu::sans::bold()).expect("embedded DejaVu font parses");
    let scale = PxScale::from(FONT_PX);
    let scaled = font.as_scaled(scale);
    let ascent = scaled.ascent();
    let outlines: Vec<_> = ('0'..='9')
        .map(|c| {
            let glyph = font
                .glyph_id(c)
                .with_scale_and_position(scale, point(0.0, ascent));
            font.outline_glyph(glyph)
                .expect("digit glyphs have outlines")
        })
        .collect();
    // One cell that holds every digit, so they share a baseline and left edge.
    let (mut x0, mut y0, mut x1, mut y1) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for o in &outlines {
        let b = o.px_bounds();
        x0 = x0.min(b.min.x);
        y0 = y0.min(b.min.y);
        x1 = x1.max(b.max.x);
        y1 = y1.max(b.max.y);
    }
    let (cell_w, cell_h) = ((x1 - x0).ceil() as u32, (y1 - y0).ceil() as u32);
    let masks = outlines
        .iter()
        .map(|o| {
            let mut mask = vec![0u8; (cell_w * cell_h) as usize];
            let b = o.px_bounds();
            let (ox, oy) = ((b.min.x - x0) as u32, (b.min.y - y0) as u32);
            o.draw(|x, y, c| {
                let (cx, cy) = (x + ox, y + oy);
                if cx < cell_w && cy < cell_h {
                    let v = (c.clamp(0.0, 1.0) * 255.0).round() as u8;
                    let i = (cy * cell_w + cx) as usize;
                    mask[i] = mask[i].max(v);
                }
            });
            mask
        })
        .collect();
    let advance = scaled.h_advance(font.glyph_id('0')).round() as u32;
    Digits {
        cell_w,
        cell_h,
        advance,
        masks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_rasterised() {
        let d = digits();
        assert!(d.cell_h >= 8 && d.cell_h <= 12, "cell_h {}", d.cell_h);
        assert!(d.advance >= 6 && d.advance <= 10);
        for digit in 0..10 {
            assert!(
                d.coverage(digit).iter().any(|&c| c > 200),
                "digit {digit} is blank"
            );
        }
        assert_ne!(d.coverage(1), d.coverage(7));
    }
}
