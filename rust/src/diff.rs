//! Visual diff of two screenshots of the same page.
//!
//! 1. Alignment: both images map to page coordinates through their scroll offset and scale
//!    (image px per CSS px). The "before" image is resampled to the "after" scale if they differ,
//!    and shifted by the scroll difference, so content that merely scrolled lines up. Only the
//!    overlap is compared; what scrolled into view has nothing to compare with and is not counted.
//! 2. Per pixel, pixelmatch 7.2's recipe (mapbox/pixelmatch `index.js`, ported): the squared YIQ
//!    distance against `35215 * threshold²`, and a pixel over it is still not counted when it
//!    looks like anti-aliasing in either image (Vysniauskas' slope detector). Screenshots are
//!    opaque (alpha is flattened at decode), so the alpha blending branch is not needed.
//! 3. Changed pixels are grouped into regions: 8 px grid cells, connected components with a
//!    small gap tolerance, boxes closer than `MERGE_PX` merged, then the closest pairs merged
//!    until at most `max_regions` remain. Largest first.
//!
//! Rendering the outlined image lives in `diffimage`.

use std::time::Instant;

use crate::decode::decode;
use crate::error::{CoreError, Result};
use crate::geometry::IRect;
use crate::header::read_header;
use crate::input::{image_bytes, Input};
use crate::limits::check_dimensions;
use crate::raster::Raster;
use crate::resize::resize_owned;

/// The largest possible squared YIQ distance (black vs white), as in pixelmatch.
const MAX_YIQ_DELTA: f64 = 35215.0;
/// Grid cell of the region grouping, in image px.
const CELL: usize = 8;
/// Cells within this many cells of each other join one component.
const CELL_REACH: usize = 2;
/// Boxes closer than this (image px, edge to edge) are one region.
const MERGE_PX: i64 = 24;

/// One screenshot and where it sits on the page.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    pub input: Input<'a>,
    /// The page's scroll offset at capture (CSS px).
    pub scroll: (f64, f64),
    /// Image px per CSS px.
    pub scale: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffOptions {
    /// pixelmatch's threshold: 0 (exact) to 1; 0.1 by default.
    pub threshold: f64,
    /// Count anti-aliased pixels too (pixelmatch `includeAA`).
    pub include_aa: bool,
    pub max_regions: usize,
    /// Regions with fewer changed pixels than this are dropped as noise.
    pub min_region_pixels: u64,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            threshold: 0.1,
            include_aa: false,
            max_regions: 10,
            min_region_pixels: 1,
        }
    }
}

impl DiffOptions {
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(CoreError::Options("threshold must be in 0..=1".into()));
        }
        if !(1..=100).contains(&self.max_regions) {
            return Err(CoreError::Options("max_regions must be in 1..=100".into()));
        }
        Ok(())
    }
}

/// A changed area, in pixels of the "after" image (half-open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub rect: IRect,
    /// Changed pixels inside.
    pub changed: u64,
}

/// Both images decoded and aligned: `after` as given, `before` at the after scale; after pixel
/// (x, y) shows the page point that is at before pixel (x + dx, y + dy).
#[derive(Debug)]
pub struct Aligned {
    pub before: Raster,
    pub after: Raster,
    pub offset: (i64, i64),
    /// The compared area, in after px.
    pub overlap: IRect,
}

#[derive(Debug)]
pub struct Comparison {
    pub aligned: Aligned,
    pub changed: u64,
    pub compared: u64,
    pub regions: Vec<Region>,
    pub timings_us: Vec<(&'static str, u64)>,
}

fn decode_full(input: Input<'_>) -> Result<Raster> {
    let data = image_bytes(input)?;
    let header = read_header(&data)?;
    check_dimensions(u64::from(header.width), u64::from(header.height))?;
    Ok(decode(&data, &header, (header.width, header.height))?.raster)
}

fn check_frame(f: &Frame<'_>, which: &str) -> Result<()> {
    let ok = f.scale.is_finite() && f.scale > 0.0 && f.scale <= 16.0;
    if !ok || !f.scroll.0.is_finite() || !f.scroll.1.is_finite() {
        return Err(CoreError::Options(format!(
            "{which}: scale must be in (0, 16] and scroll finite"
        )));
    }
    Ok(())
}

/// Decode both images and line them up in page coordinates.
pub fn align(before: &Frame<'_>, after: &Frame<'_>) -> Result<Aligned> {
    check_frame(before, "before")?;
    check_frame(after, "after")?;
    let (b, a) = std::thread::scope(|s| {
        let helper = s.spawn(|| decode_full(before.input));
        let a = decode_full(after.input);
        let b = helper
            .join()
            .unwrap_or_else(|_| Err(CoreError::Internal("decode thread panicked".into())));
        (b, a)
    });
    let (mut b, a) = (b?, a?);
    // Different zoom or device pixel ratio: bring "before" to the after scale.
    let ratio = after.scale / before.scale;
    if (ratio - 1.0).abs() > 0.005 {
        let w = ((f64::from(b.width) * ratio).round() as u32).max(1);
        let h = ((f64::from(b.height) * ratio).round() as u32).max(1);
        check_dimensions(u64::from(w), u64::from(h))?;
        b = resize_owned(b, w, h)?;
    }
    let dx = ((after.scroll.0 - before.scroll.0) * after.scale).round();
    let dy = ((after.scroll.1 - before.scroll.1) * after.scale).round();
    let (dx, dy) = (dx.clamp(-1e9, 1e9) as i64, dy.clamp(-1e9, 1e9) as i64);
    let overlap = IRect::new(
        (-dx).max(0),
        (-dy).max(0),
        i64::from(a.width).min(i64::from(b.width) - dx),
        i64::from(a.height).min(i64::from(b.height) - dy),
    );
    let overlap = if overlap.is_empty() {
        IRect::new(0, 0, 0, 0)
    } else {
        overlap
    };
    Ok(Aligned {
        before: b,
        after: a,
        offset: (dx, dy),
        overlap,
    })
}

/// Pack a window of `r` as opaque RGBA words (pixelmatch compares whole pixels as u32).
fn pack(r: &Raster, x0: i64, y0: i64, w: usize, h: usize) -> Vec<u32> {
    let ch = r.channels;
    let stride = r.stride();
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        let row = (y0 as usize + y) * stride + x0 as usize * ch;
        for p in r.data[row..row + w * ch].chunks_exact(ch) {
            out.push(u32::from_le_bytes([p[0], p[1], p[2], 255]));
        }
    }
    out
}

#[inline]
fn rgb(p: u32) -> (f64, f64, f64) {
    let [r, g, b, _] = p.to_le_bytes();
    (f64::from(r), f64::from(g), f64::from(b))
}

/// Squared YIQ distance of two opaque pixels (pixelmatch `colorDelta`, unsigned).
#[inline]
pub fn color_delta(p1: u32, p2: u32) -> f64 {
    let (r1, g1, b1) = rgb(p1);
    let (r2, g2, b2) = rgb(p2);
    let (dr, dg, db) = (r1 - r2, g1 - g2, b1 - b2);
    let y = dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
    let i = dr * 0.59597799 - dg * 0.27417610 - db * 0.32180189;
    let q = dr * 0.21147017 - dg * 0.52261711 + db * 0.31114694;
    0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q
}

/// Brightness difference of two opaque pixels (pixelmatch `brightnessDelta`).
#[inline]
fn brightness_delta(c: u32, n: u32) -> f64 {
    if c == n {
        return 0.0;
    }
    let (r1, g1, b1) = rgb(c);
    let (r2, g2, b2) = rgb(n);
    (r1 - r2) * 0.29889531 + (g1 - g2) * 0.58662247 + (b1 - b2) * 0.11448223
}

/// Whether pixel (x1, y1) has 3+ neighbours of its exact colour (edges count as one).
fn has_many_siblings(img: &[u32], x1: usize, y1: usize, w: usize, h: usize) -> bool {
    let (x0, y0) = (x1.saturating_sub(1), y1.saturating_sub(1));
    let (x2, y2) = ((x1 + 1).min(w - 1), (y1 + 1).min(h - 1));
    let val = img[y1 * w + x1];
    let mut zeroes = u32::from(x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2);
    for x in x0..=x2 {
        for y in y0..=y2 {
            if x == x1 && y == y1 {
                continue;
            }
            zeroes += u32::from(val == img[y * w + x]);
            if zeroes > 2 {
                return true;
            }
        }
    }
    false
}

/// pixelmatch `antialiased`: is (x1, y1) of `img` likely an anti-aliased edge pixel?
fn antialiased(img: &[u32], other: &[u32], x1: usize, y1: usize, w: usize, h: usize) -> bool {
    let (x0, y0) = (x1.saturating_sub(1), y1.saturating_sub(1));
    let (x2, y2) = ((x1 + 1).min(w - 1), (y1 + 1).min(h - 1));
    let c = img[y1 * w + x1];
    let mut zeroes = u32::from(x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2);
    let (mut min, mut max) = (0.0f64, 0.0f64);
    let (mut min_at, mut max_at) = ((0, 0), (0, 0));
    // Same visiting order as pixelmatch (x outer, y inner): ties pick the same neighbour.
    for x in x0..=x2 {
        for y in y0..=y2 {
            if x == x1 && y == y1 {
                continue;
            }
            let delta = brightness_delta(c, img[y * w + x]);
            if delta == 0.0 {
                zeroes += 1;
                if zeroes > 2 {
                    return false;
                }
            } else if delta < min {
                min = delta;
                min_at = (x, y);
            } else if delta > max {
                max = delta;
                max_at = (x, y);
            }
        }
    }
    if min == 0.0 || max == 0.0 {
        return false;
    }
    let many = |(x, y): (usize, usize)| {
        has_many_siblings(img, x, y, w, h) && has_many_siblings(other, x, y, w, h)
    };
    many(min_at) || many(max_at)
}

/// pixelmatch over two equally sized packed images: the changed-pixel mask (1 = counted) and
/// the count. Rows are split over two threads on large images.
pub fn compare_packed(
    a: &[u32],
    b: &[u32],
    w: usize,
    h: usize,
    opts: &DiffOptions,
) -> (Vec<u8>, u64) {
    let mut mask = vec![0u8; w * h];
    if w == 0 || h == 0 || a == b {
        return (mask, 0);
    }
    let max_delta = MAX_YIQ_DELTA * opts.threshold * opts.threshold;
    let rows = |y_start: usize, out: &mut [u8]| -> u64 {
        let mut n = 0u64;
        for (row, line) in out.chunks_exact_mut(w).enumerate() {
            let y = y_start + row;
            let base = y * w;
            for x in 0..w {
                let (pa, pb) = (a[base + x], b[base + x]);
                if pa == pb || color_delta(pa, pb) <= max_delta {
                    continue;
                }
                let aa = !opts.include_aa
                    && (antialiased(a, b, x, y, w, h) || antialiased(b, a, x, y, w, h));
                if !aa {
                    line[x] = 1;
                    n += 1;
                }
            }
        }
        n
    };
    let parallel =
        w * h >= 400_000 && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let count = if parallel {
        let mid = h / 2;
        let (top, bottom) = mask.split_at_mut(mid * w);
        std::thread::scope(|s| {
            let helper = s.spawn(|| rows(0, top));
            let here = rows(mid, bottom);
            here + helper.join().unwrap_or(0)
        })
    } else {
        rows(0, &mut mask)
    };
    (mask, count)
}

/// Compare two screenshots: aligned, pixelmatch'ed, grouped into regions.
pub fn compare(before: &Frame<'_>, after: &Frame<'_>, opts: &DiffOptions) -> Result<Comparison> {
    opts.validate()?;
    let start = Instant::now();
    let aligned = align(before, after)?;
    let decoded = start.elapsed().as_micros() as u64;
    let o = aligned.overlap;
    let (w, h) = (o.width().max(0) as usize, o.height().max(0) as usize);
    let (dx, dy) = aligned.offset;
    let pa = pack(&aligned.after, o.x0, o.y0, w, h);
    let pb = pack(&aligned.before, o.x0 + dx, o.y0 + dy, w, h);
    let t1 = Instant::now();
    let (mask, changed) = compare_packed(&pb, &pa, w, h, opts);
    let compared_us = t1.elapsed().as_micros() as u64;
    let t2 = Instant::now();
    let mut regions = group(&mask, w, h, opts.max_regions);
    regions.retain(|r| r.changed >= opts.min_region_pixels);
    for r in &mut regions {
        r.rect = IRect::new(
            r.rect.x0 + o.x0,
            r.rect.y0 + o.y0,
            r.rect.x1 + o.x0,
            r.rect.y1 + o.y0,
        );
    }
    let grouped_us = t2.elapsed().as_micros() as u64;
    Ok(Comparison {
        aligned,
        changed,
        compared: (w * h) as u64,
        regions,
        timings_us: vec![
            ("decode_align", decoded),
            ("compare", compared_us),
            ("regions", grouped_us),
        ],
    })
}

// ---- grouping ------------------------------------------------------------------------------

fn gap(a: IRect, b: IRect) -> i64 {
    let dx = (a.x0 - b.x1).max(b.x0 - a.x1).max(0);
    let dy = (a.y0 - b.y1).max(b.y0 - a.y1).max(0);
    dx.max(dy)
}

fn union(a: IRect, b: IRect) -> IRect {
    IRect::new(
        a.x0.min(b.x0),
        a.y0.min(b.y0),
        a.x1.max(b.x1),
        a.y1.max(b.y1),
    )
}

/// Changed pixels (mask of `w` x `h`) → at most `max_regions` boxes, largest first.
pub fn group(mask: &[u8], w: usize, h: usize, max_regions: usize) -> Vec<Region> {
    let (cw, ch) = (w.div_ceil(CELL), h.div_ceil(CELL));
    // Per cell: tight box of its changed pixels and their count.
    let mut boxes: Vec<Option<(IRect, u64)>> = vec![None; cw * ch];
    for y in 0..h {
        let line = &mask[y * w..(y + 1) * w];
        if !line.contains(&1) {
            continue;
        }
        for (x, _) in line.iter().enumerate().filter(|(_, &m)| m == 1) {
            let (xi, yi) = (x as i64, y as i64);
            let px = IRect::new(xi, yi, xi + 1, yi + 1);
            let cell = &mut boxes[(y / CELL) * cw + x / CELL];
            *cell = Some(match *cell {
                Some((r, n)) => (union(r, px), n + 1),
                None => (px, 1),
            });
        }
    }
    // Connected components over cells, reaching CELL_REACH cells in every direction.
    let mut seen = vec![false; cw * ch];
    let mut regions: Vec<Region> = Vec::new();
    let mut stack = Vec::new();
    for start in 0..cw * ch {
        if seen[start] || boxes[start].is_none() {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        let (mut rect, mut changed): (Option<IRect>, u64) = (None, 0);
        while let Some(i) = stack.pop() {
            let (cx, cy) = (i % cw, i / cw);
            if let Some((r, n)) = boxes[i] {
                rect = Some(rect.map_or(r, |acc| union(acc, r)));
                changed += n;
            }
            for ny in cy.saturating_sub(CELL_REACH)..=(cy + CELL_REACH).min(ch - 1) {
                for nx in cx.saturating_sub(CELL_REACH)..=(cx + CELL_REACH).min(cw - 1) {
                    let j = ny * cw + nx;
                    if !seen[j] && boxes[j].is_some() {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
            }
        }
        let Some(rect) = rect else { continue };
        regions.push(Region { rect, changed });
    }
    merge(regions, max_regions)
}

/// Merge boxes that are close (or overlap), then the closest pairs until `max` remain.
fn merge(mut regions: Vec<Region>, max: usize) -> Vec<Region> {
    loop {
        let mut best: Option<(i64, usize, usize)> = None;
        for i in 0..regions.len() {
            for j in i + 1..regions.len() {
                let g = gap(regions[i].rect, regions[j].rect);
                if best.is_none_or(|(bg, _, _)| g < bg) {
                    best = Some((g, i, j));
                }
            }
        }
        match best {
            Some((g, i, j)) if g <= MERGE_PX || regions.len() > max => {
                let b = regions.swap_remove(j);
                let a = &mut regions[i];
                a.rect = union(a.rect, b.rect);
                a.changed += b.changed;
            }
            _ => break,
        }
    }
    regions.sort_by(|a, b| {
        b.changed
            .cmp(&a.changed)
            .then((a.rect.y0, a.rect.x0).cmp(&(b.rect.y0, b.rect.x0)))
    });
    regions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Encoder;

    fn png(r: &Raster) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, r.width, r.height);
            enc.set_color(if r.channels == 4 {
                png::ColorType::Rgba
            } else {
                png::ColorType::Rgb
            });
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&r.data).unwrap();
        }
        out
    }

    /// A "page": light background, dark text-like bars with anti-aliased edges, a blue box.
    fn page(w: u32, h: u32) -> Raster {
        let mut r = Raster::filled(w, h, 3, [250, 250, 250]);
        for row in 0..(h / 20) {
            let y = i64::from(row * 20 + 6);
            let len = i64::from(40 + (row * 37) % 120);
            r.fill_rect(IRect::new(10, y, 10 + len, y + 8), [30, 30, 30]);
            // grey edge pixels, as anti-aliasing leaves them
            r.fill_rect(IRect::new(10 + len, y, 11 + len, y + 8), [140, 140, 140]);
        }
        r.fill_rect(IRect::new(200, 40, 260, 70), [20, 90, 200]);
        r
    }

    fn frame(data: &[u8], scroll_y: f64) -> Frame<'_> {
        Frame {
            input: Input::Bytes(data),
            scroll: (0.0, scroll_y),
            scale: 1.0,
        }
    }

    fn run(a: &Raster, b: &Raster, scroll: (f64, f64)) -> Comparison {
        let (pa, pb) = (png(a), png(b));
        compare(
            &frame(&pa, scroll.0),
            &frame(&pb, scroll.1),
            &DiffOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn identical_images_have_no_change() {
        let p = page(320, 200);
        let c = run(&p, &p, (0.0, 0.0));
        assert_eq!((c.changed, c.regions.len()), (0, 0));
        assert_eq!(c.compared, 320 * 200);
    }

    #[test]
    fn a_colour_change_is_one_region_in_the_right_place() {
        let a = page(320, 200);
        let mut b = a.clone();
        b.fill_rect(IRect::new(200, 40, 260, 70), [200, 40, 40]);
        let c = run(&a, &b, (0.0, 0.0));
        assert_eq!(c.changed, 60 * 30);
        assert_eq!(c.regions.len(), 1);
        assert_eq!(c.regions[0].rect, IRect::new(200, 40, 260, 70));
    }

    #[test]
    fn a_one_pixel_anti_aliased_edge_is_not_counted() {
        // A dark bar on white whose edge pixel is grey in one image and a slightly different grey
        // in the other: an anti-aliasing difference, as two renderers produce.
        let mut a = Raster::filled(40, 20, 3, [255, 255, 255]);
        a.fill_rect(IRect::new(5, 5, 20, 15), [0, 0, 0]);
        let mut b = a.clone();
        a.fill_rect(IRect::new(20, 9, 21, 10), [128, 128, 128]);
        b.fill_rect(IRect::new(20, 9, 21, 10), [220, 220, 220]);
        let pa = pack(&a, 0, 0, 40, 20);
        let pb = pack(&b, 0, 0, 40, 20);
        assert!(color_delta(pa[9 * 40 + 20], pb[9 * 40 + 20]) > MAX_YIQ_DELTA * 0.01);
        let c = run(&a, &b, (0.0, 0.0));
        assert_eq!(c.changed, 0, "an AA pixel was counted");
        // With includeAA it is counted.
        let opts = DiffOptions {
            include_aa: true,
            ..DiffOptions::default()
        };
        assert_eq!(compare_packed(&pa, &pb, 40, 20, &opts).1, 1);
    }

    #[test]
    fn a_small_colour_shift_below_threshold_is_not_counted() {
        let a = Raster::filled(30, 30, 3, [200, 200, 200]);
        let b = Raster::filled(30, 30, 3, [205, 205, 205]);
        assert_eq!(run(&a, &b, (0.0, 0.0)).changed, 0);
    }

    #[test]
    fn scrolled_content_with_known_scroll_is_no_change() {
        let tall = page(300, 600);
        let crop = |y0: u32| {
            let stride = tall.stride();
            let data = tall.data[y0 as usize * stride..(y0 as usize + 300) * stride].to_vec();
            Raster::new(300, 300, 3, data)
        };
        let (a, b) = (crop(40), crop(160));
        assert!(run(&a, &b, (0.0, 0.0)).changed > 0);
        let c = run(&a, &b, (40.0, 160.0));
        assert_eq!(c.changed, 0);
        assert_eq!(c.aligned.offset, (0, 120));
        assert_eq!(c.compared, 300 * 180);
    }

    #[test]
    fn scale_difference_is_resampled_not_a_change() {
        let a = Raster::filled(200, 100, 3, [240, 240, 240]);
        let b = Raster::filled(100, 50, 3, [240, 240, 240]);
        let (pa, pb) = (png(&a), png(&b));
        let before = Frame {
            input: Input::Bytes(&pa),
            scroll: (0.0, 0.0),
            scale: 2.0,
        };
        let c = compare(&before, &frame(&pb, 0.0), &DiffOptions::default()).unwrap();
        assert_eq!((c.changed, c.compared), (0, 100 * 50));
    }

    #[test]
    fn far_apart_changes_are_separate_regions_and_capped() {
        let a = Raster::filled(400, 400, 3, [255, 255, 255]);
        let mut b = a.clone();
        for k in 0..16 {
            let (x, y) = ((k % 4) * 100 + 10, (k / 4) * 100 + 10);
            b.fill_rect(IRect::new(x, y, x + 10 + k, y + 10), [0, 0, 0]);
        }
        let (pa, pb) = (pack(&a, 0, 0, 400, 400), pack(&b, 0, 0, 400, 400));
        let (mask, n) = compare_packed(&pa, &pb, 400, 400, &DiffOptions::default());
        assert!(n > 0);
        let all = group(&mask, 400, 400, 100);
        assert_eq!(all.len(), 16);
        assert!(all.windows(2).all(|p| p[0].changed >= p[1].changed));
        let capped = group(&mask, 400, 400, 10);
        assert_eq!(capped.len(), 10);
        assert_eq!(capped.iter().map(|r| r.changed).sum::<u64>(), n);
    }

    #[test]
    fn near_changes_merge_into_one_region() {
        let a = Raster::filled(200, 100, 3, [255, 255, 255]);
        let mut b = a.clone();
        b.fill_rect(IRect::new(10, 10, 30, 20), [0, 0, 0]);
        b.fill_rect(IRect::new(45, 10, 60, 20), [0, 0, 0]);
        let c = run(&a, &b, (0.0, 0.0));
        assert_eq!(c.regions.len(), 1);
        assert_eq!(c.regions[0].rect, IRect::new(10, 10, 60, 20));
    }

    #[test]
    fn jpeg_inputs_decode_and_compare() {
        let a = page(160, 120);
        let jpeg = Encoder::new().unwrap().encode(&a, 90).unwrap();
        let c = compare(
            &frame(&jpeg, 0.0),
            &frame(&jpeg, 0.0),
            &DiffOptions::default(),
        )
        .unwrap();
        assert_eq!(c.changed, 0);
    }

    #[test]
    fn bad_options_are_refused() {
        let p = png(&page(20, 20));
        let bad = DiffOptions {
            threshold: 2.0,
            ..DiffOptions::default()
        };
        assert!(compare(&frame(&p, 0.0), &frame(&p, 0.0), &bad).is_err());
    }
}
