//! Set-of-Mark labels: a 2 px outline around each box and a numbered badge (white
//! anti-aliased digits on a saturated dark fill with a 1 px white border, so it reads on light
//! and dark pages). Colours come from a 12-hue palette, chosen so that boxes near each other never
//! share one; badges keep off the controls' glyphs and first letters and cover the least page
//! text they can (see `placement`), and a badge pushed away from its box is tied to it by a
//! thin leader line.

use crate::canvas::Canvas;
use crate::font::digits;
use crate::geometry::{FRect, IRect};
use crate::limits::MAX_BADGES;
use crate::placement::{place_with, preferred, Slot};
use crate::raster::Rgb;

const OUTLINE_PX: i64 = 2;
const PAD_X: i64 = 3;
const PAD_Y: i64 = 2;
const WHITE: Rgb = [255, 255, 255];

/// Dark, saturated fills: white text stays readable on every one of them.
const PALETTE: [Rgb; 12] = [
    [0xC6, 0x28, 0x28], // red
    [0x15, 0x65, 0xC0], // blue
    [0x2E, 0x7D, 0x32], // green
    [0x6A, 0x1B, 0x9A], // purple
    [0xBF, 0x36, 0x0C], // deep orange
    [0x00, 0x69, 0x5C], // teal
    [0xAD, 0x14, 0x57], // pink
    [0x28, 0x35, 0x93], // indigo
    [0x4E, 0x34, 0x2E], // brown
    [0x00, 0x60, 0x64], // dark cyan
    [0x82, 0x77, 0x17], // olive
    [0x37, 0x47, 0x4F], // blue grey
];

/// Boxes closer than this (output px, edge to edge) count as neighbours for colouring.
const NEIGHBOUR_PX: i64 = 48;
/// A badge further than this from where it wanted to sit gets a leader line to its box.
const LEADER_AFTER_PX: i64 = 6;

pub fn colour(number: u32) -> Rgb {
    PALETTE[(number.wrapping_sub(1) % PALETTE.len() as u32) as usize]
}

/// Edge-to-edge gap between two rectangles (0 when they touch or overlap).
fn gap(a: IRect, b: IRect) -> i64 {
    let dx = (a.x0 - b.x1).max(b.x0 - a.x1).max(0);
    let dy = (a.y0 - b.y1).max(b.y0 - a.y1).max(0);
    dx.max(dy)
}

/// Palette index per box: the label's own hue unless an earlier neighbour has it, then the
/// next hue no neighbour uses (12 hues: a box has fewer neighbours than that in practice).
fn pick_colours(targets: &[IRect], numbers: &[u32]) -> Vec<Rgb> {
    let mut idx: Vec<usize> = Vec::with_capacity(targets.len());
    for (i, t) in targets.iter().enumerate() {
        let near: Vec<usize> = (0..i)
            .filter(|&j| gap(*t, targets[j]) < NEIGHBOUR_PX)
            .map(|j| idx[j])
            .collect();
        let start = (numbers[i].wrapping_sub(1) as usize) % PALETTE.len();
        let pick = (0..PALETTE.len())
            .map(|k| (start + k) % PALETTE.len())
            .find(|c| !near.contains(c))
            .unwrap_or(start);
        idx.push(pick);
    }
    idx.into_iter().map(|i| PALETTE[i]).collect()
}

/// The pixel of `r` nearest to (x, y). A zero-size box (an empty element, or one rounded to
/// nothing in a 1 px wide image) is its corner: `clamp(x0, x1 - 1)` would panic with min > max.
fn nearest(r: IRect, x: i64, y: i64) -> (i64, i64) {
    let span = |a: i64, b: i64, v: i64| {
        let lo = a.min(b);
        v.clamp(lo, (a.max(b) - 1).max(lo))
    };
    (span(r.x0, r.x1, x), span(r.y0, r.y1, y))
}

/// A 1 px line from the badge's nearest edge point to the box's nearest edge point.
fn leader<C: Canvas>(
    img: &mut C,
    badge: IRect,
    target: IRect,
    rgb: Rgb,
    undo: Option<&mut Vec<C::Patch>>,
) {
    let (bx, by) = ((badge.x0 + badge.x1) / 2, (badge.y0 + badge.y1) / 2);
    let (tx, ty) = nearest(target, bx, by);
    let (sx, sy) = nearest(badge, tx, ty);
    let steps = (tx - sx).abs().max((ty - sy).abs()).max(1);
    let mut points = Vec::with_capacity(steps as usize + 1);
    for k in 0..=steps {
        points.push((sx + (tx - sx) * k / steps, sy + (ty - sy) * k / steps));
    }
    if let Some(u) = undo {
        let (x0, x1) = (sx.min(tx), sx.max(tx) + 1);
        let (y0, y1) = (sy.min(ty), sy.max(ty) + 1);
        img.save(IRect::new(x0, y0, x1, y1), u);
    }
    for (x, y) in points {
        img.fill_rect(IRect::new(x, y, x + 1, y + 1), rgb);
    }
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
    /// Page text rects (of those given) that some badge covers, at least in part.
    pub text_covered: u32,
}

/// Page text the badges should keep off, in output px (line boxes of visible text).
#[derive(Debug, Clone, Copy, Default)]
pub struct Text<'a> {
    pub rects: &'a [IRect],
    /// Place badges to cover the least of it; false: only count what they cover (to compare).
    pub avoid: bool,
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
pub fn annotate<C: Canvas>(
    img: &mut C,
    labels: &[Label],
    text: Text<'_>,
    mut undo: Option<&mut Vec<C::Patch>>,
) -> Annotated {
    let (width, height) = img.size();
    let (img_w, img_h) = (i64::from(width), i64::from(height));
    let mut result = Annotated::default();
    let mut wanted = Vec::new();
    let mut numbers = Vec::new();
    let mut targets = Vec::new();
    for label in labels.iter().take(MAX_BADGES) {
        let Some(rect) = label.rect.filter(|r| touches(r, width, height)) else {
            result.offscreen += 1;
            continue;
        };
        let target = rect.round();
        let (bw, bh) = badge_size(label.number);
        wanted.push(preferred(target, bw, bh, img_w, img_h));
        numbers.push(label.number);
        targets.push(target);
    }
    let colours = pick_colours(&targets, &numbers);
    for (&target, &rgb) in targets.iter().zip(&colours) {
        for band in outline(target) {
            if let Some(u) = undo.as_deref_mut() {
                img.save(band, u);
            }
            img.fill_rect(band, rgb);
        }
    }
    let avoid: &[IRect] = if text.avoid { text.rects } else { &[] };
    let slots = place_with(&wanted, &targets, avoid, text.avoid, img_w, img_h);
    result.text_covered = text
        .rects
        .iter()
        .filter(|t| slots.iter().any(|s| s.rect().intersects(t)))
        .count() as u32;
    // Leaders first, badges on top: a line never crosses a number.
    for ((slot, want), (&target, &rgb)) in
        slots.iter().zip(&wanted).zip(targets.iter().zip(&colours))
    {
        let moved = (slot.x - want.x).abs().max((slot.y - want.y).abs());
        if moved > LEADER_AFTER_PX && gap(slot.rect(), target) > 0 {
            leader(img, slot.rect(), target, rgb, undo.as_deref_mut());
        }
    }
    // Badges go on top of every outline, so a later box never hides an earlier label.
    for ((slot, &number), &rgb) in slots.iter().zip(&numbers).zip(&colours) {
        if let Some(u) = undo.as_deref_mut() {
            img.save(slot.rect(), u);
        }
        draw_badge(img, *slot, number, rgb);
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

fn draw_badge<C: Canvas>(img: &mut C, s: Slot, number: u32, fill: Rgb) {
    img.fill_rect(s.rect(), WHITE);
    img.fill_rect(s.rect().grow(-1), fill);
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
    use crate::raster::Raster;

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
        let a = annotate(&mut img, &labels, Text::default(), None);
        assert_eq!(
            a,
            Annotated {
                drawn: 3,
                offscreen: 2,
                text_covered: 0
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
        annotate(&mut img, &labels, Text::default(), Some(&mut undo));
        assert_ne!(img, before);
        img.restore(&undo);
        assert_eq!(img, before);
    }

    #[test]
    fn caps_at_max_badges() {
        let mut img = Raster::filled(1280, 720, 3, WHITE);
        let n = MAX_BADGES as u32 + 50;
        let labels: Vec<_> = (1..=n)
            .map(|k| label(f64::from(k % 1250), f64::from(k / 1250 * 40), 30.0, 20.0, k))
            .collect();
        assert_eq!(
            annotate(&mut img, &labels, Text::default(), None).drawn,
            MAX_BADGES as u32
        );
    }

    #[test]
    fn neighbours_never_share_a_colour() {
        // A 7 x 5 calendar grid of 30 x 26 px cells, 2 px apart, labels 1..35.
        let mut targets = Vec::new();
        let mut numbers = Vec::new();
        for n in 0..35u32 {
            let (c, r) = (i64::from(n % 7), i64::from(n / 7));
            targets.push(IRect::new(c * 32, r * 28, c * 32 + 30, r * 28 + 26));
            numbers.push(n + 1);
        }
        let colours = pick_colours(&targets, &numbers);
        for i in 0..targets.len() {
            for j in 0..i {
                if gap(targets[i], targets[j]) < NEIGHBOUR_PX {
                    assert_ne!(
                        colours[i],
                        colours[j],
                        "{} and {} share a hue",
                        i + 1,
                        j + 1
                    );
                }
            }
        }
        // Far apart, labels keep their own hue (stable across captures).
        let far = pick_colours(
            &[IRect::new(0, 0, 10, 10), IRect::new(500, 500, 510, 510)],
            &[1, 13],
        );
        assert_eq!(far, vec![colour(1), colour(13)]);
    }

    #[test]
    fn a_displaced_badge_gets_a_leader_line() {
        // Six boxes at one spot: later badges move away, and lines tie the far ones to the box.
        let boxr = IRect::new(100, 100, 120, 120);
        let mut img = Raster::filled(300, 200, 3, WHITE);
        let labels: Vec<_> = (1..=6)
            .map(|n| label(100.0, 100.0, 20.0, 20.0, n))
            .collect();
        annotate(&mut img, &labels, Text::default(), None);
        let numbers: Vec<u32> = (1..=6).collect();
        let colours = pick_colours(&[boxr; 6], &numbers);
        let wanted: Vec<_> = numbers
            .iter()
            .map(|&n| preferred(boxr, badge_size(n).0, badge_size(n).1, 300, 200))
            .collect();
        let slots = place_with(&wanted, &[boxr; 6], &[], false, 300, 200);
        let far = (0..6)
            .find(|&k| gap(slots[k].rect(), boxr) > 0)
            .expect("a badge away from its box");
        let inside = |r: IRect, x: u32, y: u32| {
            let (x, y) = (i64::from(x), i64::from(y));
            x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1
        };
        let mut line = 0;
        for y in 0..200u32 {
            for x in 0..300u32 {
                let on_badge = slots.iter().any(|s| inside(s.rect(), x, y));
                if img.pixel(x, y) == colours[far] && !on_badge && !inside(boxr, x, y) {
                    line += 1;
                }
            }
        }
        assert!(line > 0, "no leader line drawn");
    }

    #[test]
    fn badges_keep_off_text_and_count_what_they_cover() {
        // A button with a caption line right above it, where its badge would sit.
        let text = [IRect::new(30, 20, 160, 38)];
        let labels = [label(40.0, 40.0, 80.0, 24.0, 1)];
        let mut blind = Raster::filled(300, 200, 3, WHITE);
        let text_blind = Text {
            rects: &text,
            avoid: false,
        };
        assert_eq!(
            annotate(&mut blind, &labels, text_blind, None).text_covered,
            1
        );
        let mut img = Raster::filled(300, 200, 3, WHITE);
        let avoid = Text {
            rects: &text,
            avoid: true,
        };
        assert_eq!(annotate(&mut img, &labels, avoid, None).text_covered, 0);
        assert_ne!(img, blind, "the badge moved");
    }

    #[test]
    fn nearest_point_of_a_zero_size_box_is_its_corner() {
        assert_eq!(nearest(IRect::new(5, 7, 5, 7), 100, -3), (5, 7));
        assert_eq!(nearest(IRect::new(0, 0, 1, 0), -9, 9), (0, 0));
        assert_eq!(nearest(IRect::new(2, 2, 6, 6), 100, 0), (5, 2));
    }

    /// The case that panicked ("min > max. min = 0, max = -1"): a 1 x 4000 PNG with two
    /// zero-size boxes at the origin, through the whole pipeline (the second badge is displaced
    /// and gets a leader line to a box with no pixels).
    #[test]
    fn one_px_wide_png_with_zero_size_boxes_does_not_panic() {
        use crate::geometry::CssGeometry;
        use crate::input::Input;
        use crate::pipeline::{run, BoxSpec, CssRect, Options, Request};
        let mut data = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut data, 1, 4000);
            enc.set_color(png::ColorType::Rgb);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&[200u8; 3 * 4000]).unwrap();
        }
        let zero = CssRect {
            x: 0.0,
            y: 0.0,
            width: 0.0,
            height: 0.0,
        };
        let boxes = [zero, zero]
            .iter()
            .zip(1..)
            .map(|(&rect, label)| BoxSpec { rect, label })
            .collect::<Vec<_>>();
        let out = run(&Request {
            input: Input::Bytes(&data),
            options: Options::default(),
            boxes: &boxes,
            masks: &[],
            text: &[],
            avoid_text: true,
            css: CssGeometry {
                device_pixel_ratio: 1.0,
                css_width: None,
                css_height: None,
            },
        })
        .unwrap();
        assert_eq!((out.source_width, out.source_height), (1, 4000));
        assert_eq!(out.badges_drawn, 2);
    }

    /// Property-style sweep: tiny images (1x1, 1xN, Nx1) with zero-size, one-pixel, huge,
    /// negative and out-of-image boxes, many on one spot (displaced badges, leader lines).
    /// Nothing panics, every box is counted once, and undo restores the image exactly.
    #[test]
    fn tiny_images_with_degenerate_boxes_never_panic() {
        let sizes = [
            (1, 1),
            (1, 2),
            (2, 1),
            (1, 7),
            (7, 1),
            (1, 60),
            (60, 1),
            (1, 1568),
            (3, 3),
        ];
        // A small deterministic generator (xorshift): no extra dependency, reproducible.
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let edges = [
            -1e12, -40.0, -1.0, -0.4, 0.0, 0.49, 0.5, 1.0, 2.0, 59.5, 1e12,
        ];
        let spans = [0.0, 0.0, 0.2, 1.0, 3.0, -2.0, 1e13];
        for &(w, h) in &sizes {
            for round in 0..40 {
                let count = 1 + next(12) as u32;
                let labels: Vec<Label> = (1..=count)
                    .map(|n| {
                        let pick = |a: &[f64], r: u64| a[r as usize % a.len()];
                        let (x, y) = (pick(&edges, next(99)), pick(&edges, next(99)));
                        let (bw, bh) = (pick(&spans, next(99)), pick(&spans, next(99)));
                        let rect = if round % 9 == 8 && n == count {
                            None
                        } else {
                            FRect::from_xywh(x, y, bw, bh)
                        };
                        Label { rect, number: n }
                    })
                    .collect();
                let mut img = Raster::filled(w, h, 3, [30, 60, 90]);
                let before = img.clone();
                let mut undo = Vec::new();
                let a = annotate(&mut img, &labels, Text::default(), Some(&mut undo));
                assert_eq!(a.drawn + a.offscreen, count, "{w}x{h} round {round}");
                img.restore(&undo);
                assert_eq!(img, before, "{w}x{h} round {round}: undo");
            }
            // Every label on one zero-size spot: all badges but one are displaced.
            let stacked: Vec<Label> = (1..=20).map(|n| label(0.0, 0.0, 0.0, 0.0, n)).collect();
            let mut img = Raster::filled(w, h, 3, WHITE);
            assert_eq!(
                annotate(&mut img, &stacked, Text::default(), None).drawn,
                20,
                "{w}x{h} stacked"
            );
        }
    }

    #[test]
    fn badge_changes_pixels_with_white_digits() {
        let mut img = Raster::filled(100, 60, 3, [0, 0, 0]);
        annotate(
            &mut img,
            &[label(20.0, 30.0, 40.0, 20.0, 7)],
            Text::default(),
            None,
        );
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
