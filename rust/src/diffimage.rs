//! The picture of a diff: the new screenshot with every changed region outlined and numbered
//! (the Set-of-Mark drawing of `annotate`), and under it the largest regions' before / after
//! crops side by side, encoded as one JPEG within the same byte budget as any screenshot.

use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

use crate::annotate::{annotate, colour, Label, Text};
use crate::budget;
use crate::diff::Comparison;
use crate::encode::Encoder;
use crate::error::Result;
use crate::geometry::{fit, FRect, IRect};
use crate::pipeline::Options;
use crate::raster::{Raster, Rgb};
use crate::resize::resize;

/// Outlines sit this far outside the changed pixels, so they never hide the change itself.
const OUTLINE_MARGIN: i64 = 3;
/// Context around a region in its crops.
const CROP_MARGIN: i64 = 8;
const GAP: i64 = 10;
const CAPTION_H: i64 = 16;
const MAX_CROP_H: f64 = 220.0;
const MAX_CROP_ZOOM: f64 = 2.0;
const PANEL: Rgb = [38, 40, 44];
const CAPTION: Rgb = [230, 230, 230];
const BEFORE_FRAME: Rgb = [150, 150, 150];

#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub jpeg: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub quality: u8,
    pub downgraded: bool,
    /// Regions shown as before / after crops.
    pub crops: u32,
}

fn to_rgb(r: &Raster) -> Raster {
    if r.channels == 3 {
        return r.clone();
    }
    let data = r
        .data
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    Raster::new(r.width, r.height, 3, data)
}

fn crop(r: &Raster, rect: IRect) -> Raster {
    let ch = r.channels;
    let (w, h) = (rect.width() as usize, rect.height() as usize);
    let mut data = Vec::with_capacity(w * h * ch);
    for y in rect.y0..rect.y1 {
        let row = y as usize * r.stride() + rect.x0 as usize * ch;
        data.extend_from_slice(&r.data[row..row + w * ch]);
    }
    Raster::new(w as u32, h as u32, ch, data)
}

/// Copy `src` into `dst` with its top-left at (x, y) (clipped).
fn blit(dst: &mut Raster, src: &Raster, x: i64, y: i64) {
    let ch = dst.channels;
    for sy in 0..i64::from(src.height) {
        let dy = y + sy;
        if dy < 0 || dy >= i64::from(dst.height) {
            continue;
        }
        let x0 = x.max(0);
        let x1 = (x + i64::from(src.width)).min(i64::from(dst.width));
        if x1 <= x0 {
            continue;
        }
        let n = (x1 - x0) as usize * ch;
        let s = sy as usize * src.stride() + (x0 - x) as usize * ch;
        let d = dy as usize * dst.stride() + x0 as usize * ch;
        dst.data[d..d + n].copy_from_slice(&src.data[s..s + n]);
    }
}

fn frame(img: &mut Raster, r: IRect, rgb: Rgb) {
    let t = 2;
    for band in [
        IRect::new(r.x0 - t, r.y0 - t, r.x1 + t, r.y0),
        IRect::new(r.x0 - t, r.y1, r.x1 + t, r.y1 + t),
        IRect::new(r.x0 - t, r.y0, r.x0, r.y1),
        IRect::new(r.x1, r.y0, r.x1 + t, r.y1),
    ] {
        img.fill_rect(band, rgb);
    }
}

fn font() -> &'static FontRef<'static> {
    static FONT: OnceLock<FontRef<'static>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(dejavu::sans::bold()).expect("DejaVu parses"))
}

/// A short caption ("1 before") in 11 px DejaVu Sans Bold, top-left at (x, y).
fn caption(img: &mut Raster, x: i64, y: i64, text: &str, rgb: Rgb) {
    let f = font();
    let scale = PxScale::from(11.0);
    let scaled = f.as_scaled(scale);
    let mut pen = x as f32;
    for c in text.chars() {
        let id = f.glyph_id(c);
        let glyph = id.with_scale_and_position(scale, point(pen, y as f32 + scaled.ascent()));
        pen += scaled.h_advance(id);
        if let Some(o) = f.outline_glyph(glyph) {
            let b = o.px_bounds();
            o.draw(|gx, gy, cov| {
                let a = (cov.clamp(0.0, 1.0) * 255.0).round() as u8;
                if a > 0 {
                    img.blend(
                        b.min.x as i64 + i64::from(gx),
                        b.min.y as i64 + i64::from(gy),
                        rgb,
                        a,
                    );
                }
            });
        }
    }
}

struct Pair {
    number: u32,
    before: Raster,
    after: Raster,
}

/// Before / after crops of the `max_crops` largest regions, zoomed to fit half the width.
fn pairs(cmp: &Comparison, width: i64, max_crops: usize) -> Result<Vec<Pair>> {
    let a = &cmp.aligned;
    let (dx, dy) = a.offset;
    let half = ((width - 3 * GAP) / 2).max(8) as f64;
    let mut out = Vec::new();
    for (i, region) in cmp.regions.iter().enumerate().take(max_crops) {
        let Some(r) = region.rect.grow(CROP_MARGIN).clip(a.overlap) else {
            continue;
        };
        let shifted = IRect::new(r.x0 + dx, r.y0 + dy, r.x1 + dx, r.y1 + dy);
        let (cw, chh) = (r.width() as f64, r.height() as f64);
        let zoom = (half / cw).min(MAX_CROP_H / chh).min(MAX_CROP_ZOOM);
        let size = (
            ((cw * zoom).round() as u32).max(1),
            ((chh * zoom).round() as u32).max(1),
        );
        out.push(Pair {
            number: i as u32 + 1,
            before: resize(&to_rgb(&crop(&a.before, shifted)), size.0, size.1)?,
            after: resize(&to_rgb(&crop(&a.after, r)), size.0, size.1)?,
        });
    }
    Ok(out)
}

/// The outlined new screenshot plus the crop panel, unencoded.
pub fn compose(cmp: &Comparison, max_crops: usize) -> Result<(Raster, u32)> {
    let mut main = to_rgb(&cmp.aligned.after);
    let labels: Vec<Label> = cmp
        .regions
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let g = r.rect.grow(OUTLINE_MARGIN);
            Label {
                rect: FRect::from_xywh(
                    g.x0 as f64,
                    g.y0 as f64,
                    g.width() as f64,
                    g.height() as f64,
                ),
                number: i as u32 + 1,
            }
        })
        .collect();
    annotate(&mut main, &labels, Text::default(), None);
    let width = i64::from(main.width);
    let pairs = pairs(cmp, width, max_crops)?;
    if pairs.is_empty() {
        return Ok((main, 0));
    }
    let rows: i64 = pairs
        .iter()
        .map(|p| CAPTION_H + i64::from(p.after.height) + 2 * GAP)
        .sum();
    let mut canvas = Raster::filled(main.width, main.height + rows as u32 + GAP as u32, 3, PANEL);
    blit(&mut canvas, &main, 0, 0);
    let mut y = i64::from(main.height) + GAP;
    for p in &pairs {
        let rgb = colour(p.number);
        let bx = GAP;
        let ax = GAP * 2 + i64::from(p.before.width).max((width - 3 * GAP) / 2);
        caption(&mut canvas, bx, y, &format!("{} before", p.number), CAPTION);
        caption(&mut canvas, ax, y, &format!("{} after", p.number), CAPTION);
        let top = y + CAPTION_H;
        let (w, h) = (i64::from(p.before.width), i64::from(p.before.height));
        blit(&mut canvas, &p.before, bx, top);
        frame(
            &mut canvas,
            IRect::new(bx, top, bx + w, top + h),
            BEFORE_FRAME,
        );
        blit(&mut canvas, &p.after, ax, top);
        frame(&mut canvas, IRect::new(ax, top, ax + w, top + h), rgb);
        y = top + h + 2 * GAP;
    }
    Ok((canvas, pairs.len() as u32))
}

/// Compose and encode within `opts`' size caps and byte budget.
pub fn render(cmp: &Comparison, opts: &Options, max_crops: usize) -> Result<Rendered> {
    opts.validate()?;
    let (canvas, crops) = compose(cmp, max_crops)?;
    let full = fit(
        canvas.width,
        canvas.height,
        opts.max_width,
        opts.max_long_edge,
    );
    let mut encoder = Encoder::new()?;
    let mut sized: Option<((u32, u32), Raster)> = None;
    let fitted = budget::fit(
        full,
        opts.quality,
        opts.min_quality,
        opts.max_bytes,
        |size, q, effort| {
            if size == (canvas.width, canvas.height) {
                return encoder.encode_with(&canvas, q, effort);
            }
            if sized.as_ref().is_none_or(|(s, _)| *s != size) {
                sized = Some((size, resize(&canvas, size.0, size.1)?));
            }
            let img = &sized.as_ref().expect("just set").1;
            encoder.encode_with(img, q, effort)
        },
    )?;
    Ok(Rendered {
        jpeg: fitted.bytes,
        width: fitted.size.0,
        height: fitted.size.1,
        quality: fitted.quality,
        downgraded: fitted.downgraded,
        crops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{compare, DiffOptions, Frame};
    use crate::input::Input;

    fn jpeg(r: &Raster) -> Vec<u8> {
        Encoder::new().unwrap().encode(r, 95).unwrap()
    }

    #[test]
    fn render_outlines_regions_and_adds_crops_within_budget() {
        let a = Raster::filled(400, 300, 3, [255, 255, 255]);
        let mut b = a.clone();
        b.fill_rect(IRect::new(50, 50, 120, 80), [200, 0, 0]);
        b.fill_rect(IRect::new(300, 200, 340, 240), [0, 0, 200]);
        let (ja, jb) = (jpeg(&a), jpeg(&b));
        let f = |d: &[u8]| -> Vec<u8> { d.to_vec() };
        let (da, db) = (f(&ja), f(&jb));
        let fa = Frame {
            input: Input::Bytes(&da),
            scroll: (0.0, 0.0),
            scale: 1.0,
        };
        let fb = Frame {
            input: Input::Bytes(&db),
            scroll: (0.0, 0.0),
            scale: 1.0,
        };
        let cmp = compare(&fa, &fb, &DiffOptions::default()).unwrap();
        assert_eq!(cmp.regions.len(), 2);
        let (canvas, crops) = compose(&cmp, 3).unwrap();
        assert_eq!(crops, 2);
        assert!(canvas.height > 300);
        // The region's outline is drawn just outside the change.
        assert_ne!(canvas.pixel(48, 60), [255, 255, 255]);
        let opts = Options {
            max_bytes: 20_000,
            ..Options::default()
        };
        let out = render(&cmp, &opts, 3).unwrap();
        assert!(out.jpeg.len() <= 20_000);
        assert_eq!(out.width, 400);
    }
}
