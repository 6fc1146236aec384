//! Where badges go: at the top-left of their box (above it when there is room), clamped into
//! the image, and never on top of an earlier badge: when two would land within
//! `MIN_DISTANCE` px of each other (or overlap), the later one is offset to the nearest free slot.

use crate::geometry::IRect;

/// Badges closer than this (in both x and y) count as colliding.
pub const MIN_DISTANCE: i64 = 20;
/// How far (in slot steps) to look for a free position before giving up.
const SEARCH_RINGS: i64 = 6;

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

/// Final slots for badges wanted at `wanted` (in drawing order). Earlier badges keep their
/// place; a later one that collides moves. If the image is too small for a free slot, the badge
/// stays at its preferred place (nothing better exists).
pub fn place(wanted: &[Slot], img_w: i64, img_h: i64) -> Vec<Slot> {
    let offsets = offsets();
    let mut placed: Vec<Slot> = Vec::with_capacity(wanted.len());
    for &want in wanted {
        let step_x = MIN_DISTANCE.max(want.w + 2);
        let step_y = MIN_DISTANCE.max(want.h + 2);
        let free = offsets.iter().find_map(|&(i, j)| {
            let cand = Slot {
                x: want.x + i * step_x,
                y: want.y + j * step_y,
                ..want
            }
            .clamped(img_w, img_h);
            (!placed.iter().any(|p| p.collides(&cand))).then_some(cand)
        });
        placed.push(free.unwrap_or(want));
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(x: i64, y: i64) -> Slot {
        Slot { x, y, w: 18, h: 14 }
    }

    #[test]
    fn separate_badges_stay_put() {
        let wanted = [slot(10, 10), slot(100, 10), slot(10, 100)];
        assert_eq!(place(&wanted, 500, 500), wanted.to_vec());
    }

    #[test]
    fn close_badges_are_offset() {
        let wanted = [slot(50, 50), slot(55, 52), slot(50, 50), slot(60, 45)];
        let placed = place(&wanted, 500, 500);
        assert_eq!(placed[0], wanted[0]);
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                assert!(!a.collides(b), "{a:?} collides with {b:?}");
            }
        }
    }

    #[test]
    fn hundred_badges_at_one_point_do_not_overlap() {
        let wanted = vec![slot(300, 300); 100];
        let placed = place(&wanted, 1280, 720);
        for (i, a) in placed.iter().enumerate() {
            assert!(a.x >= 0 && a.y >= 0 && a.x + a.w <= 1280 && a.y + a.h <= 720);
            for b in &placed[i + 1..] {
                assert!(!a.collides(b));
            }
        }
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
