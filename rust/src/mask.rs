//! Opaque black-out rectangles (password fields and other secrets).
//!
//! Masks are painted twice: on the decoded pixels before resampling, so no secret pixel can
//! leak into its neighbours through the filter, and on the resized pixels so the output edge is
//! crisp. Both happen before annotations and before any encoding.

use crate::canvas::Canvas;
use crate::geometry::{FRect, IRect};

const BLACK: [u8; 3] = [0, 0, 0];

/// Paint every rect black, each grown outward to whole `align`-px blocks (align >= 1).
pub fn apply<C: Canvas>(img: &mut C, rects: &[FRect], align: i64) {
    for r in rects {
        img.fill_rect(aligned(r.cover(), align), BLACK);
    }
}

fn aligned(r: IRect, align: i64) -> IRect {
    if align <= 1 {
        return r;
    }
    IRect::new(
        r.x0.div_euclid(align) * align,
        r.y0.div_euclid(align) * align,
        (r.x1 + align - 1).div_euclid(align) * align,
        (r.y1 + align - 1).div_euclid(align) * align,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raster::Raster;

    #[test]
    fn alignment_covers_whole_blocks() {
        assert_eq!(aligned(IRect::new(9, 3, 17, 8), 8), IRect::new(8, 0, 24, 8));
        assert_eq!(aligned(IRect::new(-3, 0, 1, 1), 4), IRect::new(-4, 0, 4, 4));
        assert_eq!(aligned(IRect::new(1, 2, 3, 4), 1), IRect::new(1, 2, 3, 4));
    }

    #[test]
    fn mask_blacks_out_every_touched_pixel() {
        let mut img = Raster::filled(10, 10, 4, [200, 200, 200]);
        apply(
            &mut img,
            &[FRect::from_xywh(2.5, 2.5, 2.0, 2.0).unwrap()],
            1,
        );
        assert_eq!(img.pixel(2, 2), BLACK);
        assert_eq!(img.pixel(4, 4), BLACK);
        assert_eq!(img.pixel(5, 5), [200, 200, 200]);
    }
}
