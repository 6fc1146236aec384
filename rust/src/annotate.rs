//! Set-of-Mark labels: a 2 px outline around each box and a numbered badge (white
//! anti-aliased digits on a saturated dark fill with a 1 px white border, so it reads on light
//! and dark pages). Colours cycle through a palette by label number.

use crate::font::digits;
use crate::geometry::{FRect, IRect};
use crate::limits::MAX_BADGES;
use crate::placement::{place, preferred, Slot};
use crate::raster::{Patch, Raster, Rgb};

const OUTLINE_PX: i64 = 2;
const PAD_X: i64 = 3;
const PAD_Y: i64 = 2;
const WHITE: Rgb = [255, 255, 255];

/// Dark, saturated fills: white text stays readable on every one of them.
const PALETTE: [Rgb; 8] = [
    [0xC6, 0x28, 0x28], // red
    [0x15, 0x65, 0xC0], // blue
    [0x2E, 0x7D, 0x32], // green
    [0x6A, 0x1B, 0x9A], // purple
    [0xBF, 0x36, 0x0C], // deep orange
    [0x00, 0x69, 0x5C], // teal
    [0xAD, 0x14, 0x57], // pink
    [0x28, 0x35, 0x93], // indigo
];

pub fn colour(number: u32) -> Rgb {
    PALETTE[(number.wrapping_sub(1) % PALETTE.len() as u32) as usize]
}

/// A box to label, already mapped to output pixels (None: non-finite input).
#[derive(Debug, Clone, Copy)]
pub struct Label {
    pub rect: Option<FRect>,
    pub number: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotated {
    /// Badges drawn: boxes (among the first `MAX_BADGES`) that touch the image.
    pub drawn: u32,
    /// Boxes (among the first `MAX_BADGES`) wholly outside the image: nothing to point at.
    pub offscreen: u32,
}

/// Badge size for a label number.
pub fn badge_size(number: u32) -> (i64, i64) {
    let d = digits();
    let n = number.to_string().len() as u32;
    let w = i64::from(d.text_width(n)) + 2 * PAD_X + 2;
    let h = i64::from(d.cell_h) + 2 * PAD_Y + 2;
    (w, h)
}

/// Whether a (possibly zero-size) box touches the image at all.
fn touches(r: &FRect, w: u32, h: u32) -> bool {
    r.x0 < f64::from(w) && r.x1 >= 0.0 && r.y0 < f64::from(h) && r.y1 >= 0.0
}

/// Draw the first `MAX_BADGES` labels; later ones are ignored. With `undo`, the pixels drawn
/// over are saved there first (see `Raster::restore`).
pub fn annotate(
    img: &mut Raster,
    labels: &[Label],
    mut undo: Option<&mut Vec<Patch>>,
) -> Annotated {
    let (img_w, img_h) = (i64::from(img.width), i64::from(img.height));
    let mut result = Annotated::default();
    let mut wanted = Vec::new();
    let mut numbers = Vec::new();
    for label in labels.iter().take(MAX_BADGES) {
        let Some(rect) = label.rect.filter(|r| touches(r, img.width, img.height)) else {
            result.offscreen += 1;
            continue;
        };
        let target = rect.round();
        for band in outline(target) {
            if let Some(u) = undo.as_deref_mut() {
                img.save(band, u);
            }
            img.fill_rect(band, colour(label.number));
        }
        let (bw, bh) = badge_size(label.number);
        wanted.push(preferred(target, bw, bh, img_w, img_h));
        numbers.push(label.number);
    }
    // Badges go on top of every outline, so a later box never hides an earlier label.
    for (slot, &number) in place(&wanted, img_w, img_h).iter().zip(&numbers) {
        if let Some(u) = undo.as_deref_mut() {
            img.save(slot.rect(), u);
        }
        draw_badge(img, *slot, number);
    }
    result.drawn = numbers.len() as u32;
    result
}

/// The bands of a 2 px outline just inside `r` (the whole rect when it is that thin).
fn outline(r: IRect) -> Vec<IRect> {
    let t = OUTLINE_PX;
    if r.width() <= 2 * t || r.height() <= 2 * t {
        return vec![r];
    }
    vec![
        IRect::new(r.x0, r.y0, r.x1, r.y0 + t),
        IRect::new(r.x0, r.y1 - t, r.x1, r.y1),
        IRect::new(r.x0, r.y0 + t, r.x0 + t, r.y1 - t),
        IRect::new(r.x1 - t, r.y0 + t, r.x1, r.y1 - t),
    ]
}

fn draw_badge(img: &mut Raster, s: Slot, number: u32) {
    img.fill_rect(s.rect(), WHITE);
    img.fill_rect(s.rect().grow(-1), colour(number));
    let d = digits();
    let mut x = s.x + 1 + PAD_X;
    let y = s.y + 1 + PAD_Y;
    for ch in number.to_string().bytes() {
        let mask = d.coverage(ch - b'0');
        for (row, line) in mask.chunks_exact(d.cell_w as usize).enumerate() {
            for (col, &alpha) in line.iter().enumerate() {
                if alpha != 0 {
                    img.blend(x + col as i64, y + row as i64, WHITE, alpha);
                }
            }
        }
        x += i64::from(d.advance);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(x: f64, y: f64, w: f64, h: f64, number: u32) -> Label {
        Label {
            rect: FRect::from_xywh(x, y, w, h),
            number,
        }
    }

    #[test]
    fn counts_drawn_and_offscreen() {
        let mut img = Raster::filled(200, 100, 3, WHITE);
        let labels = [
            label(10.0, 30.0, 50.0, 20.0, 1),
            label(-50.0, -50.0, 60.0, 60.0, 2), // partly visible
            label(500.0, 10.0, 10.0, 10.0, 3),  // wholly outside
            label(100.0, 50.0, 0.0, 0.0, 4),    // zero size, inside
            Label {
                rect: None,
                number: 5,
            },
        ];
        let a = annotate(&mut img, &labels, None);
        assert_eq!(
            a,
            Annotated {
                drawn: 3,
                offscreen: 2
            }
        );
    }

    #[test]
    fn undo_restores_the_unlabelled_image() {
        let mut img = Raster::filled(300, 200, 3, [10, 200, 30]);
        let before = img.clone();
        let labels: Vec<_> = (1..=30)
            .map(|n| label(f64::from(n * 7), 50.0, 40.0, 20.0, n))
            .collect();
        let mut undo = Vec::new();
        annotate(&mut img, &labels, Some(&mut undo));
        assert_ne!(img, before);
        img.restore(&undo);
        assert_eq!(img, before);
    }

    #[test]
    fn caps_at_max_badges() {
        let mut img = Raster::filled(1280, 720, 3, WHITE);
        let labels: Vec<_> = (1..=150)
            .map(|n| label(f64::from(n), 300.0, 30.0, 20.0, n))
            .collect();
        assert_eq!(annotate(&mut img, &labels, None).drawn, 100);
    }

    #[test]
    fn badge_changes_pixels_with_white_digits() {
        let mut img = Raster::filled(100, 60, 3, [0, 0, 0]);
        annotate(&mut img, &[label(20.0, 30.0, 40.0, 20.0, 7)], None);
        let (bw, bh) = badge_size(7);
        let fill = colour(7);
        let mut saw_fill = false;
        let mut saw_white_text = false;
        for y in 30 - bh + 1..29 {
            for x in 21..20 + bw - 1 {
                let p = img.pixel(x as u32, y as u32);
                saw_fill |= p == fill;
                saw_white_text |= p == WHITE;
            }
        }
        assert!(saw_fill && saw_white_text);
        assert_eq!(img.pixel(21, 31), fill); // outline
    }
}
