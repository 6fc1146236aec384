//! Where badges go. A badge's preferred slot is the top-left corner of its box (above it when
//! there is room); the other spots touching the box (its other corners, inside or outside, and
//! its sides) are the alternatives. Among those that keep clear of every earlier badge, the one
//! that covers the least page text wins, then the one nearest the preferred slot: a label that
//! hides the words next to it (a calendar's day numbers, a menu's items) costs the reader what
//! the label was meant to point at. When every spot at the box is taken, the search widens ring
//! by ring and the nearest free slot wins (a leader line then ties it to its box); with no text
//! near the box that search is all there is. Badges never land on an earlier badge: a hidden
//! number is worse than hidden text.
//!
//! Before text comes every box's head: its left end, a square or two of its height, where a
//! checkbox or radio draws its glyph and a field or button shows the first characters of its
//! label. A badge there hides what a person recognises the control by, so any spot clear of
//! every head beats one on a head, wherever the text is.

use crate::geometry::IRect;

/// Badges closer than this (in both x and y) count as colliding.
pub const MIN_DISTANCE: i64 = 20;
/// How far (in slot steps) to look for a free position before giving up.
const SEARCH_RINGS: i64 = 6;
/// Text further than this from a box cannot be under any of its near candidates.
const TEXT_REACH_PX: i64 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub x: i64,
    pub y: i64,
    pub w: i64,
    pub h: i64,
}

impl Slot {
    pub fn rect(&self) -> IRect {
        IRect::new(self.x, self.y, self.x + self.w, self.y + self.h)
    }

    fn collides(&self, o: &Slot) -> bool {
        let near = (self.x - o.x).abs() < MIN_DISTANCE && (self.y - o.y).abs() < MIN_DISTANCE;
        near || self.rect().grow(1).intersects(&o.rect())
    }

    fn clamped(mut self, img_w: i64, img_h: i64) -> Slot {
        self.x = self.x.min(img_w - self.w).max(0);
        self.y = self.y.min(img_h - self.h).max(0);
        self
    }

    fn at(&self, x: i64, y: i64) -> Slot {
        Slot { x, y, ..*self }
    }

    /// Squared distance from `o`'s position.
    fn dist2(&self, o: &Slot) -> i64 {
        let (dx, dy) = (self.x - o.x, self.y - o.y);
        dx * dx + dy * dy
    }
}

/// Pixels of page text under a badge at `s` (text rects may overlap: each counts).
pub fn text_overlap(s: &Slot, text: &[IRect]) -> i64 {
    let r = s.rect();
    text.iter()
        .filter_map(|t| r.clip(*t))
        .map(|c| c.width() * c.height())
        .sum()
}

/// A box's head: its left end, two squares of its height (the whole box when it is smaller),
/// where the glyph and the first characters of its label are.
pub fn head(t: IRect) -> IRect {
    IRect::new(t.x0, t.y0, t.x1.min(t.x0 + 2 * t.height()), t.y1)
}

/// Pixels of the boxes' heads under a badge at `s`.
pub fn head_overlap(s: &Slot, heads: &[IRect]) -> i64 {
    text_overlap(s, heads)
}

/// The preferred slot of a `w` x `h` badge for a box: its top-left corner, sitting just above
/// the box when there is room, else just inside it.
pub fn preferred(target: IRect, w: i64, h: i64, img_w: i64, img_h: i64) -> Slot {
    let y = if target.y0 - h >= 0 {
        target.y0 - h
    } else {
        target.y0
    };
    Slot {
        x: target.x0,
        y,
        w,
        h,
    }
    .clamped(img_w, img_h)
}

/// Offsets to try, nearest first; at equal distance horizontal moves before vertical ones,
/// right before left, down before up.
fn offsets() -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = (-SEARCH_RINGS..=SEARCH_RINGS)
        .flat_map(|i| (-SEARCH_RINGS..=SEARCH_RINGS).map(move |j| (i, j)))
        .collect();
    v.sort_by_key(|&(i, j)| (i * i + j * j, j.abs(), i < 0, j < 0));
    v
}

/// Spots touching the box: all four corners (inside and outside) and both sides, preferred
/// first. A badge there still reads as the box's own without a leader line.
fn near_candidates(want: Slot, t: IRect, img_w: i64, img_h: i64) -> Vec<Slot> {
    let (w, h) = (want.w, want.h);
    let (left, right) = (t.x0, t.x1 - w);
    [
        want,
        want.at(left, t.y0),      // inside, top-left
        want.at(right, t.y0 - h), // above, right
        want.at(right, t.y0),     // inside, top-right
        want.at(left, t.y1),      // below, left
        want.at(right, t.y1),     // below, right
        want.at(left, t.y1 - h),  // inside, bottom-left
        want.at(right, t.y1 - h), // inside, bottom-right
        want.at(t.x0 - w, t.y0),  // left side
        want.at(t.x1, t.y0),      // right side
        want.at(t.x0 - w, t.y1 - h),
        want.at(t.x1, t.y1 - h),
    ]
    .into_iter()
    .map(|s| s.clamped(img_w, img_h))
    .collect()
}

fn step_x(s: &Slot) -> i64 {
    MIN_DISTANCE.max(s.w + 2)
}

fn step_y(s: &Slot) -> i64 {
    MIN_DISTANCE.max(s.h + 2)
}

/// Final slots for badges wanted at `wanted` (in drawing order) for boxes `targets`, covering as
/// little of `text` (page text rects, output px) as they can. Earlier badges keep their place; a
/// later one never lands on them. If the image is too small for a free slot, the badge stays at
/// its preferred place (nothing better exists).
pub fn place(
    wanted: &[Slot],
    targets: &[IRect],
    text: &[IRect],
    img_w: i64,
    img_h: i64,
) -> Vec<Slot> {
    place_with(wanted, targets, text, true, img_w, img_h)
}

/// `place`, keeping off the boxes' heads only with `keep_off_heads` (false: the text-blind
/// search of old, which placement is measured against).
pub fn place_with(
    wanted: &[Slot],
    targets: &[IRect],
    text: &[IRect],
    keep_off_heads: bool,
    img_w: i64,
    img_h: i64,
) -> Vec<Slot> {
    let offsets = offsets();
    let heads: Vec<IRect> = if keep_off_heads {
        targets.iter().map(|&t| head(t)).collect()
    } else {
        Vec::new()
    };
    let mut placed: Vec<Slot> = Vec::with_capacity(wanted.len());
    for (&want, &target) in wanted.iter().zip(targets) {
        let free = |c: &Slot| !placed.iter().any(|p| p.collides(c));
        // Only the text and heads around this box can be under its near candidates.
        let reach = target.grow(TEXT_REACH_PX + want.w.max(want.h));
        let around = |rects: &[IRect]| -> Vec<IRect> {
            rects
                .iter()
                .copied()
                .filter(|t| t.intersects(&reach))
                .collect()
        };
        let (local, local_heads) = (around(text), around(&heads));
        // Nothing to keep clear of at the preferred slot and no text around: the nearest free
        // slot, exactly as before text was considered.
        let crowded = !local.is_empty() || head_overlap(&want, &local_heads) > 0;
        let near = crowded
            .then(|| {
                near_candidates(want, target, img_w, img_h)
                    .into_iter()
                    .filter(free)
                    .min_by_key(|c| {
                        let on_head = head_overlap(c, &local_heads);
                        (on_head, text_overlap(c, &local), c.dist2(&want))
                    })
            })
            .flatten();
        let slot = match near {
            Some(c) if head_overlap(&c, &local_heads) == 0 => Some(c),
            // Every spot at the box is on a head: further out, one clear of them all.
            _ => {
                let far = target.grow(SEARCH_RINGS * step_x(&want).max(step_y(&want)) + want.w);
                let ring_heads: Vec<IRect> = heads
                    .iter()
                    .copied()
                    .filter(|h| h.intersects(&far))
                    .collect();
                let rings = offsets
                    .iter()
                    .map(|&(i, j)| ring_at(want, i, j, img_w, img_h))
                    .filter(free);
                rings
                    .clone()
                    .find(|c| head_overlap(c, &ring_heads) == 0)
                    .or(near)
                    .or_else(|| rings.take(1).next())
            }
        };
        placed.push(slot.unwrap_or(want));
    }
    placed
}

/// The slot `i`, `j` steps away from `want`, inside the image.
fn ring_at(want: Slot, i: i64, j: i64, img_w: i64, img_h: i64) -> Slot {
    let (sx, sy) = (step_x(&want), step_y(&want));
    want.at(want.x + i * sx, want.y + j * sy)
        .clamped(img_w, img_h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(x: i64, y: i64) -> Slot {
        Slot { x, y, w: 18, h: 14 }
    }

    /// Boxes of 40 x 20 px under each wanted slot's preferred position.
    fn boxes_for(wanted: &[Slot]) -> Vec<IRect> {
        wanted
            .iter()
            .map(|s| IRect::new(s.x, s.y + s.h, s.x + 40, s.y + s.h + 20))
            .collect()
    }

    #[test]
    fn separate_badges_stay_put() {
        let wanted = [slot(10, 10), slot(100, 10), slot(10, 100)];
        assert_eq!(
            place(&wanted, &boxes_for(&wanted), &[], 500, 500),
            wanted.to_vec()
        );
    }

    #[test]
    fn close_badges_are_offset() {
        let wanted = [slot(50, 50), slot(55, 52), slot(50, 50), slot(60, 45)];
        let boxes = boxes_for(&wanted);
        let placed = place(&wanted, &boxes, &[], 500, 500);
        // The first keeps to its box (its preferred spot is on the fourth box's head).
        assert!(placed[0].rect().grow(1).intersects(&boxes[0]), "{placed:?}");
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                assert!(!a.collides(b), "{a:?} collides with {b:?}");
            }
        }
    }

    #[test]
    fn hundred_badges_at_one_point_do_not_overlap() {
        let wanted = vec![slot(300, 300); 100];
        let text = [IRect::new(250, 250, 400, 330)];
        let placed = place(&wanted, &boxes_for(&wanted), &text, 1280, 720);
        for (i, a) in placed.iter().enumerate() {
            assert!(a.x >= 0 && a.y >= 0 && a.x + a.w <= 1280 && a.y + a.h <= 720);
            for b in &placed[i + 1..] {
                assert!(!a.collides(b));
            }
        }
    }

    #[test]
    fn a_badge_next_to_a_text_run_moves_off_it() {
        // A 60 x 24 button at (100, 40); a line of text just above it, where the badge would sit.
        let target = IRect::new(100, 40, 160, 64);
        let want = preferred(target, 18, 14, 500, 500);
        let text = [IRect::new(90, 24, 200, 40)];
        assert!(
            text_overlap(&want, &text) > 0,
            "the test needs text under the usual spot"
        );
        let [got] = place(&[want], &[target], &text, 500, 500)[..] else {
            panic!("one badge")
        };
        assert_eq!(
            text_overlap(&got, &text),
            0,
            "{got:?} still covers the text"
        );
        // It stays at the box (touching it), not somewhere far away.
        assert!(
            got.rect().grow(1).intersects(&target),
            "{got:?} left its box"
        );
    }

    #[test]
    fn text_inside_the_box_sends_the_badge_to_a_free_corner() {
        // A calendar cell whose number sits in its middle, a heading line above the cell.
        let target = IRect::new(100, 100, 130, 126);
        let text = [IRect::new(60, 86, 200, 100), IRect::new(109, 106, 121, 120)];
        let want = preferred(target, 18, 14, 500, 500);
        let got = place(&[want], &[target], &text, 500, 500)[0];
        assert!(text_overlap(&got, &text) < text_overlap(&want, &text));
    }

    #[test]
    fn without_text_or_crowding_the_preferred_slot_wins() {
        let target = IRect::new(100, 40, 160, 64);
        let want = preferred(target, 18, 14, 500, 500);
        let far_text = [IRect::new(400, 400, 480, 420)];
        assert_eq!(place(&[want], &[target], &far_text, 500, 500), vec![want]);
    }

    #[test]
    fn text_never_pushes_a_badge_onto_another() {
        // Text everywhere: badges still keep clear of each other.
        let wanted: Vec<Slot> = (0..30)
            .map(|k| slot(40 + (k % 6) * 8, 40 + (k / 6) * 6))
            .collect();
        let text = [IRect::new(0, 0, 400, 400)];
        let placed = place(&wanted, &boxes_for(&wanted), &text, 400, 400);
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                assert!(!a.collides(b), "{a:?} collides with {b:?}");
            }
        }
    }

    #[test]
    fn a_badge_keeps_off_a_checkbox_glyph_at_the_top_of_the_image() {
        // A 16 px checkbox at the top edge: no room above, and "inside" would hide its box.
        let target = IRect::new(40, 0, 56, 16);
        let want = preferred(target, 18, 14, 500, 500);
        assert!(
            head_overlap(&want, &[head(target)]) > 0,
            "the test needs the inside spot"
        );
        let got = place(&[want], &[target], &[], 500, 500)[0];
        assert_eq!(
            head_overlap(&got, &[head(target)]),
            0,
            "{got:?} covers the glyph"
        );
        assert!(
            got.rect().grow(1).intersects(&target),
            "{got:?} left its box"
        );
    }

    #[test]
    fn badges_of_a_row_of_radios_keep_off_every_radio_and_the_captions() {
        // Radios 16 px with their captions in a row at the top; badges may not hide a dot or
        // the first letters of a caption, their own or a neighbour's.
        let targets: Vec<IRect> = (0..4)
            .map(|k| IRect::new(10 + k * 90, 2, 10 + k * 90 + 80, 18))
            .collect();
        let text: Vec<IRect> = targets
            .iter()
            .map(|t| IRect::new(t.x0 + 20, 4, t.x1, 16))
            .collect();
        let wanted: Vec<Slot> = targets
            .iter()
            .map(|&t| preferred(t, 18, 14, 600, 300))
            .collect();
        let placed = place(&wanted, &targets, &text, 600, 300);
        let heads: Vec<IRect> = targets.iter().map(|&t| head(t)).collect();
        for s in &placed {
            assert_eq!(
                head_overlap(s, &heads),
                0,
                "{s:?} covers a radio or its first letters"
            );
        }
    }

    #[test]
    fn a_field_keeps_its_badge_off_its_first_characters() {
        // A text field whose badge cannot go above (a field right above it): not on its left end.
        let field = IRect::new(100, 60, 300, 90);
        let above = IRect::new(100, 20, 300, 50);
        let wanted = [
            preferred(above, 18, 14, 500, 500),
            preferred(field, 18, 14, 500, 500),
        ];
        let placed = place(&wanted, &[above, field], &[], 500, 500);
        assert_eq!(
            head_overlap(&placed[1], &[head(field), head(above)]),
            0,
            "{placed:?}"
        );
    }

    #[test]
    fn preferred_is_above_or_inside_and_clamped() {
        assert_eq!(
            preferred(IRect::new(40, 40, 90, 60), 18, 14, 500, 500),
            slot(40, 26)
        );
        assert_eq!(
            preferred(IRect::new(40, 5, 90, 60), 18, 14, 500, 500),
            slot(40, 5)
        );
        assert_eq!(
            preferred(IRect::new(495, 498, 600, 600), 18, 14, 500, 500),
            slot(482, 484)
        );
    }
}
