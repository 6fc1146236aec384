//! A 4:2:0 YCbCr image as libjpeg-turbo decodes a browser JPEG without its colour conversion
//! and chroma upsampling (one buffer: Y, then Cb, then Cr, rows unpadded). Masks and labels are
//! drawn on it directly and it is encoded the same way back, so a labelled screenshot skips two
//! colour conversions and a resampling of its chroma.
//!
//! A chroma sample stands for a 2x2 block of image px. Drawing over part of a block moves the
//! sample toward the new colour by the share of the block covered: what the encoder's 2x2
//! averaging makes of one such drawing on RGB pixels (a second drawing over the same block,
//! where the first left its pixels' chroma unequal, is close to it but not exact). Masks cover
//! whole blocks and set them outright.

use std::ops::Range;

use turbojpeg::{Subsamp, YuvPlanesImage};

use crate::canvas::Canvas;
use crate::geometry::IRect;
use crate::raster::Rgb;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Planes {
    pub width: u32,
    pub height: u32,
    data: Vec<u8>,
}

/// One colour in JPEG's full-range YCbCr, with libjpeg's fixed-point constants.
pub fn ycc([r, g, b]: Rgb) -> [u8; 3] {
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    let half = 1 << 15;
    let centre = 128 << 16;
    let y = 19595 * r + 38470 * g + 7471 * b + half;
    let cb = -11059 * r - 21709 * g + 32768 * b + centre + half;
    let cr = 32768 * r - 27439 * g - 5329 * b + centre + half;
    [y, cb, cr].map(|v| (v >> 16).clamp(0, 255) as u8)
}

/// Move `c` toward `target` by `k / n` (rounded).
fn mix(c: &mut u8, target: u8, k: u32, n: u32) {
    *c = ((u32::from(*c) * (n - k) + u32::from(target) * k + n / 2) / n) as u8;
}

/// How much of [a, a + 2) lies in [lo, hi).
fn overlap(a: i64, lo: i64, hi: i64) -> u32 {
    ((a + 2).min(hi) - a.max(lo)).max(0) as u32
}

impl Planes {
    /// A `width` x `height` image's planes, zeroed, for a decoder to fill.
    pub fn zeroed(width: u32, height: u32) -> Planes {
        let mut p = Planes {
            width,
            height,
            data: Vec::new(),
        };
        p.data = vec![0; p.c_offset(2)];
        p
    }

    /// The whole buffer, laid out as `turbojpeg::YuvImage` with `align` 1 expects it.
    pub fn buffer_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }

    /// Luma row length (the width padded to the chroma block) and row count (same for height).
    fn y_dims(&self) -> (usize, usize) {
        (
            self.width.next_multiple_of(2) as usize,
            self.height.next_multiple_of(2) as usize,
        )
    }

    fn c_dims(&self) -> (usize, usize) {
        (
            self.width.div_ceil(2) as usize,
            self.height.div_ceil(2) as usize,
        )
    }

    /// Where chroma plane `k` (0: Cb, 1: Cr, 2: the end) starts.
    fn c_offset(&self, k: usize) -> usize {
        let (yw, yh) = self.y_dims();
        let (cw, ch) = self.c_dims();
        yw * yh + k * cw * ch
    }

    /// Image px of the chroma block at (cx, cy) that lie inside the image.
    fn block_px(&self, cx: i64, cy: i64) -> u32 {
        let inside = |a: i64, end: u32| ((a + 2).min(i64::from(end)) - a) as u32;
        inside(2 * cx, self.width) * inside(2 * cy, self.height)
    }

    fn y_index(&self, x: i64, y: i64) -> usize {
        y as usize * self.y_dims().0 + x as usize
    }

    fn c_index(&self, k: usize, cx: i64, cy: i64) -> usize {
        self.c_offset(k) + cy as usize * self.c_dims().0 + cx as usize
    }

    /// The chroma samples `r` touches.
    fn c_rect(r: IRect) -> IRect {
        IRect::new(
            r.x0.div_euclid(2),
            r.y0.div_euclid(2),
            (r.x1 + 1).div_euclid(2),
            (r.y1 + 1).div_euclid(2),
        )
    }

    /// Rows `rows` (starting on an even row) as TurboJPEG's separate-planes view, to encode.
    pub fn view(&self, rows: Range<usize>) -> YuvPlanesImage<&[u8]> {
        debug_assert!(rows.start.is_multiple_of(2) && rows.end <= self.height as usize);
        let (yw, _) = self.y_dims();
        let (cw, _) = self.c_dims();
        let c0 = rows.start / 2;
        YuvPlanesImage {
            y_plane: &self.data[rows.start * yw..self.c_offset(0)],
            u_plane: &self.data[self.c_offset(0) + c0 * cw..self.c_offset(1)],
            v_plane: &self.data[self.c_offset(1) + c0 * cw..self.c_offset(2)],
            width: self.width as usize,
            height: rows.len(),
            y_stride: yw,
            u_stride: cw,
            v_stride: cw,
            subsamp: Subsamp::Sub2x2,
        }
    }
}

/// The samples under a rectangle, saved before drawing over them.
#[derive(Debug, Clone)]
pub struct PlanesPatch {
    luma: IRect,
    chroma: IRect,
    y: Vec<u8>,
    c: [Vec<u8>; 2],
}

impl Canvas for Planes {
    type Patch = PlanesPatch;

    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn fill_rect(&mut self, rect: IRect, rgb: Rgb) {
        let Some(r) = rect.clip(self.bounds()) else {
            return;
        };
        let [y, cb, cr] = ycc(rgb);
        for row in r.y0..r.y1 {
            let i = self.y_index(r.x0, row);
            self.data[i..i + r.width() as usize].fill(y);
        }
        let c = Planes::c_rect(r);
        for cy in c.y0..c.y1 {
            let rows = overlap(2 * cy, r.y0, r.y1);
            for cx in c.x0..c.x1 {
                let k = rows * overlap(2 * cx, r.x0, r.x1);
                let n = self.block_px(cx, cy);
                for (plane, target) in [(0, cb), (1, cr)] {
                    let i = self.c_index(plane, cx, cy);
                    mix(&mut self.data[i], target, k, n);
                }
            }
        }
    }

    fn blend(&mut self, x: i64, y: i64, rgb: Rgb, alpha: u8) {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return;
        }
        let [ty, cb, cr] = ycc(rgb);
        let i = self.y_index(x, y);
        mix(&mut self.data[i], ty, u32::from(alpha), 255);
        // This pixel is one of the block's `n`: its chroma moves by alpha / n.
        let (cx, cy) = (x / 2, y / 2);
        let n = 255 * self.block_px(cx, cy);
        for (plane, target) in [(0, cb), (1, cr)] {
            let i = self.c_index(plane, cx, cy);
            mix(&mut self.data[i], target, u32::from(alpha), n);
        }
    }

    fn save(&self, rect: IRect, undo: &mut Vec<PlanesPatch>) {
        let Some(luma) = rect.clip(self.bounds()) else {
            return;
        };
        let chroma = Planes::c_rect(luma);
        let rows = |r: IRect, index: &dyn Fn(i64, i64) -> usize| {
            let mut out = Vec::with_capacity((r.width() * r.height()) as usize);
            for row in r.y0..r.y1 {
                let i = index(r.x0, row);
                out.extend_from_slice(&self.data[i..i + r.width() as usize]);
            }
            out
        };
        undo.push(PlanesPatch {
            luma,
            chroma,
            y: rows(luma, &|x, y| self.y_index(x, y)),
            c: [0, 1].map(|k| rows(chroma, &|x, y| self.c_index(k, x, y))),
        });
    }
}

impl Planes {
    /// Put saved samples back, newest first (patches may overlap).
    pub fn restore(&mut self, undo: &[PlanesPatch]) {
        for p in undo.iter().rev() {
            let (w, cw) = (p.luma.width() as usize, p.chroma.width() as usize);
            for (n, row) in (p.luma.y0..p.luma.y1).enumerate() {
                let i = self.y_index(p.luma.x0, row);
                self.data[i..i + w].copy_from_slice(&p.y[n * w..(n + 1) * w]);
            }
            for (k, saved) in p.c.iter().enumerate() {
                for (n, row) in (p.chroma.y0..p.chroma.y1).enumerate() {
                    let i = self.c_index(k, p.chroma.x0, row);
                    self.data[i..i + cw].copy_from_slice(&saved[n * cw..(n + 1) * cw]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planes(w: u32, h: u32) -> Planes {
        let mut p = Planes::zeroed(w, h);
        for (i, v) in p.data.iter_mut().enumerate() {
            *v = (i * 37 % 251) as u8;
        }
        p
    }

    fn chroma(p: &Planes, k: usize, cx: i64, cy: i64) -> u8 {
        p.data[p.c_index(k, cx, cy)]
    }

    #[test]
    fn colours_convert_as_libjpeg_does() {
        assert_eq!(ycc([0, 0, 0]), [0, 128, 128]);
        assert_eq!(ycc([255, 255, 255]), [255, 128, 128]);
        assert_eq!(ycc([255, 0, 0]), [76, 85, 255]);
        assert_eq!(ycc([0, 0, 255]), [29, 255, 107]);
    }

    #[test]
    fn layout_matches_turbojpeg() {
        for (w, h) in [(1278, 719), (333, 131), (1, 1), (2, 3)] {
            let p = Planes::zeroed(w, h);
            let len = turbojpeg::yuv_pixels_len(w as usize, 1, h as usize, Subsamp::Sub2x2);
            assert_eq!(p.data.len(), len.unwrap(), "{w}x{h}");
        }
    }

    #[test]
    fn a_fill_on_whole_blocks_sets_every_sample() {
        let mut p = planes(9, 7);
        p.fill_rect(IRect::new(2, 2, 6, 6), [0, 0, 0]);
        for y in 2..6 {
            for x in 2..6 {
                assert_eq!(p.data[p.y_index(x, y)], 0);
            }
        }
        for (cx, cy) in [(1, 1), (2, 1), (1, 2), (2, 2)] {
            assert_eq!([chroma(&p, 0, cx, cy), chroma(&p, 1, cx, cy)], [128, 128]);
        }
        // The last column and row are blocks of one and two px: covering those is covering all.
        let mut p = planes(9, 7);
        p.fill_rect(IRect::new(8, 6, 9, 7), [0, 0, 0]);
        assert_eq!([chroma(&p, 0, 4, 3), chroma(&p, 1, 4, 3)], [128, 128]);
    }

    #[test]
    fn a_fill_over_part_of_a_block_moves_its_chroma_by_that_share() {
        let mut p = Planes::zeroed(4, 4);
        p.fill_rect(IRect::new(1, 0, 2, 2), [0, 0, 0]); // 2 of block (0, 0)'s 4 px
        assert_eq!(chroma(&p, 0, 0, 0), 64);
        assert_eq!(p.data[p.y_index(0, 0)], 0);
        assert_eq!(chroma(&p, 0, 1, 0), 0, "untouched");
    }

    #[test]
    fn blending_moves_luma_exactly_and_chroma_by_the_pixel_share() {
        let mut p = Planes::zeroed(2, 2);
        for (x, y) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            p.blend(x, y, [255, 255, 255], 255);
        }
        assert_eq!(p.data[..4], [255; 4]);
        // Each pixel moves the shared sample a quarter of the way from where it stands (the
        // pixels' own earlier chroma is not kept): 1 - (3/4)^4 of the way in all.
        for c in [chroma(&p, 0, 0, 0), chroma(&p, 1, 0, 0)] {
            assert!((85..=90).contains(&c), "{c}");
        }
        p.blend(-1, 0, [0, 0, 0], 255); // off the image: ignored
        p.blend(0, 2, [0, 0, 0], 255);
        assert_eq!(p.data[..4], [255; 4]);
    }

    #[test]
    fn save_and_restore_undo_drawing() {
        let before = planes(13, 9);
        let mut p = before.clone();
        let mut undo = Vec::new();
        for r in [
            IRect::new(1, 1, 6, 4),
            IRect::new(3, 2, 13, 9),
            IRect::new(-4, -4, 2, 2),
        ] {
            p.save(r, &mut undo);
            p.fill_rect(r, [200, 10, 60]);
        }
        p.save(IRect::new(5, 5, 6, 6), &mut undo);
        p.blend(5, 5, [0, 0, 255], 128);
        assert_ne!(p, before);
        p.restore(&undo);
        assert_eq!(p, before);
    }
}
