//! The hot path: input -> decode (DCT-scaled for JPEG) -> resize -> masks -> labels ->
//! JPEG within budget -> thumbnail within budget. Pure Rust, no Python: the bindings call
//! `run` with the GIL released.

use std::time::Instant;

use crate::annotate::{annotate, Annotated, Label, Text};
use crate::budget;
use crate::canvas::Canvas;
use crate::decode::{decode, decode_planes};
use crate::encode::{Effort, Encoder};
use crate::error::{CoreError, Result};
use crate::geometry::{fit, CssGeometry, FRect, IRect, Mapping};
use crate::header::{read_header, Format};
use crate::input::{image_bytes, Input};
use crate::labelled;
use crate::limits::{
    check_dimensions, MAX_BADGES, MAX_QUALITY, MAX_SIDE, MAX_TEXT_RECTS, MIN_MAX_BYTES, MIN_QUALITY,
};
use crate::mask;
use crate::planes::Planes;
use crate::raster::Raster;
use crate::resize::{resize, resize_owned};
use crate::wipe;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    pub max_width: u32,
    pub max_long_edge: u32,
    pub quality: u8,
    pub min_quality: u8,
    pub max_bytes: usize,
    pub thumb_width: u32,
    pub thumb_max_bytes: usize,
    /// Make the thumbnail of an image the core re-encodes (false: `Output::thumbnail` is empty
    /// and its size 0x0; a caller that may never show it makes it later, from the output). An
    /// input kept as it came still gets one: it is made meanwhile, and proves the input decodes.
    pub thumbnail: bool,
    /// The JPEG quality the browser was asked for, when the caller knows it. A JPEG already at
    /// the output size, at most `quality`, within `max_bytes` and with no labels to draw is
    /// kept as it came, its masks blacked out in its DCT coefficients (`wipe`): decoding and
    /// re-encoding it would cost time and sharpness for nothing.
    pub source_quality: Option<u8>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_width: 1280,
            max_long_edge: 1568,
            quality: 60,
            min_quality: 30,
            max_bytes: 500_000,
            thumb_width: 320,
            thumb_max_bytes: 30_000,
            thumbnail: true,
            source_quality: None,
        }
    }
}

impl Options {
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(CoreError::Options(m));
        let side = 1..=MAX_SIDE as u32;
        if !side.contains(&self.max_width) || !side.contains(&self.max_long_edge) {
            return bad(format!(
                "max_width and max_long_edge must be in 1..={MAX_SIDE}"
            ));
        }
        if !side.contains(&self.thumb_width) {
            return bad(format!("thumb_width must be in 1..={MAX_SIDE}"));
        }
        if !(MIN_QUALITY..=MAX_QUALITY).contains(&self.quality) {
            return bad(format!("quality must be in {MIN_QUALITY}..={MAX_QUALITY}"));
        }
        if !(MIN_QUALITY..=self.quality).contains(&self.min_quality) {
            return bad(format!("min_quality must be in {MIN_QUALITY}..=quality"));
        }
        if self.max_bytes < MIN_MAX_BYTES || self.thumb_max_bytes < MIN_MAX_BYTES {
            return bad(format!(
                "max_bytes and thumb_max_bytes must be >= {MIN_MAX_BYTES}"
            ));
        }
        Ok(())
    }
}

/// A rectangle in CSS px relative to the top-left of the area the image covers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CssRect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxSpec {
    pub rect: CssRect,
    /// Number shown on the badge.
    pub label: u32,
}

#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub input: Input<'a>,
    pub options: Options,
    pub boxes: &'a [BoxSpec],
    pub masks: &'a [CssRect],
    pub css: CssGeometry,
    /// Visible page text (line boxes, CSS px like `boxes`) that badges keep off; the first
    /// `MAX_TEXT_RECTS` are used.
    pub text: &'a [CssRect],
    /// Place badges to cover the least text; false: only count it (`Output::text_covered`).
    pub avoid_text: bool,
}

fn validate_css(css: &CssGeometry) -> Result<()> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    if !ok(css.device_pixel_ratio) || css.device_pixel_ratio > 16.0 {
        return Err(CoreError::Options(
            "device_pixel_ratio must be in (0, 16]".into(),
        ));
    }
    if css.css_width.is_some_and(|v| !ok(v)) || css.css_height.is_some_and(|v| !ok(v)) {
        return Err(CoreError::Options(
            "css_width / css_height must be finite and > 0".into(),
        ));
    }
    Ok(())
}

/// A mask that cannot be placed must fail loudly: skipping it would leak the secret.
fn validate_masks(masks: &[CssRect]) -> Result<()> {
    let finite = |r: &CssRect| [r.x, r.y, r.width, r.height].iter().all(|v| v.is_finite());
    if masks.iter().all(finite) {
        Ok(())
    } else {
        Err(CoreError::Options("mask coordinates must be finite".into()))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub jpeg: Vec<u8>,
    pub thumbnail: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub source_width: u32,
    pub source_height: u32,
    pub thumb_width: u32,
    pub thumb_height: u32,
    /// Output px per CSS px (horizontal).
    pub css_to_output_scale: f64,
    pub quality: u8,
    pub downgraded: bool,
    pub scale_applied: f64,
    pub thumb_quality: u8,
    pub thumb_downgraded: bool,
    pub badges_drawn: u32,
    pub boxes_offscreen: u32,
    /// Text rects (of those given) that some badge covers, at least in part.
    pub text_covered: u32,
    pub dct_scale_denom: u32,
    /// (stage, microseconds) in pipeline order; "total" last.
    pub timings_us: Vec<(&'static str, u64)>,
}

pub(crate) struct Clock {
    start: Instant,
    last: Instant,
    stages: Vec<(&'static str, u64)>,
}

impl Clock {
    fn new() -> Clock {
        let now = Instant::now();
        Clock {
            start: now,
            last: now,
            stages: Vec::with_capacity(8),
        }
    }

    pub(crate) fn lap(&mut self, stage: &'static str) {
        let now = Instant::now();
        self.stages
            .push((stage, (now - self.last).as_micros() as u64));
        self.last = now;
    }

    /// Start timing again after a wait that belongs to no stage (`prepare` then `finish`):
    /// "total" is the stages' work, not the time between.
    fn resume(&mut self) {
        let now = Instant::now();
        self.start += now - self.last;
        self.last = now;
    }

    fn finish(mut self) -> Vec<(&'static str, u64)> {
        self.stages
            .push(("total", self.start.elapsed().as_micros() as u64));
        self.stages
    }
}

/// Masks mapped onto a raster. A mask whose coordinates overflow when scaled (to infinity or
/// NaN) is an error, never skipped: skipping it would leave the secret in the image.
fn mask_rects(map: &Mapping, masks: &[CssRect]) -> Result<Vec<FRect>> {
    masks
        .iter()
        .map(|r| {
            map.rect(r.x, r.y, r.width, r.height).ok_or_else(|| {
                CoreError::Options(format!(
                    "mask ({}, {}, {}x{}) cannot be placed on the image: its coordinates overflow",
                    r.x, r.y, r.width, r.height
                ))
            })
        })
        .collect()
}

/// Paint masks then labels (saving what the labels cover into `undo`, if given).
pub(crate) fn draw<C: Canvas>(
    img: &mut C,
    req: &Request<'_>,
    src: (u32, u32),
    undo: Option<&mut Vec<C::Patch>>,
) -> Result<Annotated> {
    let map = Mapping::new(&req.css, src, img.size());
    let masks = mask_rects(&map, req.masks)?;
    mask::apply(img, &masks, 1);
    if req.boxes.is_empty() {
        return Ok(Annotated::default());
    }
    let labels: Vec<Label> = req
        .boxes
        .iter()
        .take(MAX_BADGES)
        .map(|b| Label {
            rect: map.rect(b.rect.x, b.rect.y, b.rect.width, b.rect.height),
            number: b.label,
        })
        .collect();
    let text: Vec<IRect> = req
        .text
        .iter()
        .take(MAX_TEXT_RECTS)
        .filter_map(|r| map.rect(r.x, r.y, r.width, r.height))
        .map(|r| r.round())
        .collect();
    let text = Text {
        rects: &text,
        avoid: req.avoid_text,
    };
    Ok(annotate(img, &labels, text, undo))
}

/// Black out the request's masks on pixels decoded from a `src`-sized input. DCT-scaled JPEG
/// pixels depend on whole 16x16-px MCUs of the source, so those masks are widened to whole
/// scaled MCUs; others to a 2 px grid (a 4:2:0 chroma sample).
fn paint_masks<C: Canvas>(
    req: &Request<'_>,
    px: &mut C,
    src: (u32, u32),
    format: Format,
    dct_denom: u32,
) -> Result<()> {
    if req.masks.is_empty() {
        return Ok(());
    }
    let map = Mapping::new(&req.css, src, px.size());
    let rects = mask_rects(&map, req.masks)?;
    let grid = if format == Format::Jpeg && dct_denom > 1 {
        (16 / dct_denom).max(2)
    } else {
        2
    };
    mask::apply(px, &rects, i64::from(grid));
    Ok(())
}

/// The thumbnail size of a `(w, h)` image: `thumb_width` wide at most, aspect kept.
pub(crate) fn thumb_size(opts: &Options, (w, h): (u32, u32)) -> (u32, u32) {
    let tw = opts.thumb_width.min(w);
    (
        tw,
        ((f64::from(h) * f64::from(tw) / f64::from(w)).round() as u32).max(1),
    )
}

/// `img` resized to `size` and encoded within the thumbnail's byte budget.
pub(crate) fn fit_thumbnail(
    opts: &Options,
    img: &Raster,
    size: (u32, u32),
    encoder: &mut Encoder,
) -> Result<budget::Fitted> {
    budget::fit(
        size,
        opts.quality,
        opts.min_quality,
        opts.thumb_max_bytes,
        |size, q, e| encoder.encode_with(&resize(img, size.0, size.1)?, q, e),
    )
}

/// What stands for the thumbnail when none was asked for (`Options::thumbnail`).
pub(crate) fn no_thumbnail() -> budget::Fitted {
    budget::Fitted {
        bytes: Vec::new(),
        quality: 0,
        size: (0, 0),
        scale: 1.0,
        downgraded: false,
    }
}

/// The thumbnail of an input that leaves as it came: decoded DCT-scaled from the input itself,
/// its masks painted (which also proves the input decodes: a broken stream fails here as it
/// would on the full path). With the DCT denominator it was decoded at.
fn thumbnail_of(
    req: &Request<'_>,
    data: &[u8],
    header: &crate::header::Header,
) -> Result<(budget::Fitted, u32)> {
    let src = (header.width, header.height);
    let size = thumb_size(&req.options, src);
    let decoded = decode(data, header, size)?;
    let mut px = decoded.raster;
    paint_masks(req, &mut px, src, header.format, decoded.dct_denom)?;
    let thumb = fit_thumbnail(&req.options, &px, size, &mut Encoder::new()?)?;
    Ok((thumb, decoded.dct_denom))
}

/// The quality to keep the input at, when it can leave as it came (see `Options::source_quality`).
fn kept_quality(
    req: &Request<'_>,
    format: Format,
    src: (u32, u32),
    out: (u32, u32),
    len: usize,
) -> Option<u8> {
    let opts = &req.options;
    let q = opts.source_quality?;
    let unlabelled = req.boxes.is_empty();
    (format == Format::Jpeg
        && unlabelled
        && src == out
        && q <= opts.quality
        && len <= opts.max_bytes)
        .then_some(q)
}

/// The input with its masks blacked out in the DCT coefficients (the input itself when there
/// are none), or None when that cannot be done here (the full path then paints them).
fn masked_as_is<'a>(
    req: &Request<'_>,
    data: &'a [u8],
    src: (u32, u32),
) -> Result<Option<std::borrow::Cow<'a, [u8]>>> {
    if req.masks.is_empty() {
        return Ok(Some(std::borrow::Cow::Borrowed(data)));
    }
    let map = Mapping::new(&req.css, src, src);
    let rects: Vec<IRect> = mask_rects(&map, req.masks)?
        .iter()
        .map(|r| r.cover())
        .collect();
    Ok(wipe::wipe(data, &rects)?
        .filter(|bytes| bytes.len() <= req.options.max_bytes)
        .map(std::borrow::Cow::Owned))
}

/// The input JPEG (masked in its coefficients) as the output, with its thumbnail.
fn keep_as_is(
    req: &Request<'_>,
    data: &[u8],
    header: &crate::header::Header,
    quality: u8,
    (thumb, dct_denom): (budget::Fitted, u32),
    mut clock: Clock,
) -> Result<Output> {
    let src = (header.width, header.height);
    clock.lap("thumbnail");
    let (sx, _) = req.css.source_scale(src.0, src.1);
    Ok(Output {
        jpeg: data.to_vec(),
        thumbnail: thumb.bytes,
        width: src.0,
        height: src.1,
        source_width: src.0,
        source_height: src.1,
        thumb_width: thumb.size.0,
        thumb_height: thumb.size.1,
        css_to_output_scale: sx,
        quality,
        downgraded: false,
        scale_applied: 1.0,
        thumb_quality: thumb.quality,
        thumb_downgraded: thumb.downgraded,
        badges_drawn: 0,
        boxes_offscreen: 0,
        text_covered: 0,
        dct_scale_denom: dct_denom,
        timings_us: clock.finish(),
    })
}

/// A screenshot decoded for labelling: at the output size, masks painted, no labels yet.
/// `prepare` makes it and `finish` draws the labels and encodes, so a caller whose labels are
/// still on their way (the host's early pixels) can decode meanwhile.
pub struct Prepared {
    decoded: Decoded,
    /// The input's bytes: a budget that needs a smaller image than the planes decodes them
    /// again (`finish`'s caller passes only the labels).
    data: Vec<u8>,
}

/// The pixels ready for labels, and what the output's numbers need of the decode.
struct Decoded {
    base: Base,
    src: (u32, u32),
    out: (u32, u32),
    dct_denom: u32,
    clock: Clock,
}

/// The decoded pixels: a browser JPEG's own YCbCr planes when they are already the output size
/// (drawn on and encoded without colour conversions), RGB otherwise.
enum Base {
    Rgb(Raster),
    Planes(Planes),
}

#[cfg(test)]
impl Prepared {
    pub(crate) fn on_planes(&self) -> bool {
        matches!(self.decoded.base, Base::Planes(_))
    }

    /// The same image decoded to RGB instead (to compare the two ways of drawing).
    pub(crate) fn redecode_as_rgb(&mut self, req: &Request<'_>) -> Result<()> {
        self.decoded.base = Base::Rgb(rgb_base(&self.data, req, self.decoded.out)?);
        Ok(())
    }
}

/// The checks every request passes before any pixel is read.
fn validate(req: &Request<'_>) -> Result<()> {
    req.options.validate()?;
    validate_css(&req.css)?;
    validate_masks(req.masks)
}

pub fn run(req: &Request<'_>) -> Result<Output> {
    validate(req)?;
    let mut clock = Clock::new();

    // Decode, refusing oversized images from the header alone.
    let data = image_bytes(req.input)?;
    let header = read_header(&data)?;
    check_dimensions(u64::from(header.width), u64::from(header.height))?;
    let src = (header.width, header.height);
    let out = fit(
        src.0,
        src.1,
        req.options.max_width,
        req.options.max_long_edge,
    );
    if let Some(q) = kept_quality(req, header.format, src, out, data.len()) {
        // The thumbnail is made meanwhile on a second thread, from the input with the same
        // masks painted (a decode of the masked bytes could only start after the masking).
        let (kept, thumb) = std::thread::scope(|s| {
            let thumb = s.spawn(|| thumbnail_of(req, &data, &header));
            let kept = masked_as_is(req, &data, src);
            let thumb = thumb
                .join()
                .unwrap_or_else(|_| Err(CoreError::Internal("thumbnail thread panicked".into())));
            (kept, thumb)
        });
        if let Some(kept) = kept? {
            clock.lap("mask"); // and the thumbnail, made meanwhile
            return keep_as_is(req, &kept, &header, q, thumb?, clock);
        }
    }
    let decoded = decode_masked(req, &data, &header, out, clock)?;
    label(decoded, &data, req)
}

/// Decode `req`'s image and paint its masks, ready for `finish` (the labels are not read).
pub fn prepare(req: &Request<'_>) -> Result<Prepared> {
    validate(req)?;
    let clock = Clock::new();
    let data = image_bytes(req.input)?.into_owned();
    let header = read_header(&data)?;
    check_dimensions(u64::from(header.width), u64::from(header.height))?;
    let out = fit(
        header.width,
        header.height,
        req.options.max_width,
        req.options.max_long_edge,
    );
    let decoded = decode_masked(req, &data, &header, out, clock)?;
    Ok(Prepared { decoded, data })
}

/// Decode (DCT-scaled toward `out`), black out the masks, resize to `out`.
fn decode_masked(
    req: &Request<'_>,
    data: &[u8],
    header: &crate::header::Header,
    out: (u32, u32),
    mut clock: Clock,
) -> Result<Decoded> {
    let src = (header.width, header.height);
    if let Some(decoded) = decode_planes(data, header, out)? {
        clock.lap("decode");
        let mut planes = decoded.raster;
        paint_masks(req, &mut planes, src, header.format, decoded.dct_denom)?;
        clock.lap("resize"); // none needed: only the masks
        return Ok(Decoded {
            base: Base::Planes(planes),
            src,
            out,
            dct_denom: decoded.dct_denom,
            clock,
        });
    }
    let (base, dct_denom) = masked_rgb(req, data, header, out, &mut clock)?;
    Ok(Decoded {
        base: Base::Rgb(base),
        src,
        out,
        dct_denom,
        clock,
    })
}

/// Decode to RGB (DCT-scaled toward `out`), black out the masks, resize to `out`; with the DCT
/// denominator used.
fn masked_rgb(
    req: &Request<'_>,
    data: &[u8],
    header: &crate::header::Header,
    out: (u32, u32),
    clock: &mut Clock,
) -> Result<(Raster, u32)> {
    let decoded = decode(data, header, out)?;
    clock.lap("decode");
    // Secrets are blacked out on the decoded pixels first, so the resampling filter cannot
    // smear them into the output.
    let mut px = decoded.raster;
    let src = (header.width, header.height);
    paint_masks(req, &mut px, src, header.format, decoded.dct_denom)?;
    let base = resize_owned(px, out.0, out.1)?;
    clock.lap("resize");
    Ok((base, decoded.dct_denom))
}

/// `data` (`req`'s image) decoded to RGB at `out` size, its masks painted: for a budget that
/// needs a smaller image than the YCbCr planes it was labelled on.
pub(crate) fn rgb_base(data: &[u8], req: &Request<'_>, out: (u32, u32)) -> Result<Raster> {
    let header = read_header(data)?;
    Ok(masked_rgb(req, data, &header, out, &mut Clock::new())?.0)
}

/// Draw `req`'s labels on a prepared image and encode it (and its thumbnail) within budget.
/// `req` must carry the options, geometry and masks `prepared` was made with.
pub fn finish(prepared: Prepared, req: &Request<'_>) -> Result<Output> {
    validate(req)?;
    label(prepared.decoded, &prepared.data, req)
}

/// Draw the labels on `decoded` (made from `data`) and encode.
fn label(decoded: Decoded, data: &[u8], req: &Request<'_>) -> Result<Output> {
    let Decoded {
        base,
        src,
        out,
        dct_denom,
        mut clock,
    } = decoded;
    clock.resume();
    let labelled::Encoded {
        main,
        thumb,
        annotated,
    } = match base {
        Base::Rgb(raster) => labelled::on_rgb(raster, req, src, out, &mut clock)?,
        Base::Planes(planes) => labelled::on_planes(planes, data, req, src, out, &mut clock)?,
    };
    let (w, h) = main.size;
    let (sx, _) = req.css.source_scale(src.0, src.1);
    Ok(Output {
        jpeg: main.bytes,
        thumbnail: thumb.bytes,
        width: w,
        height: h,
        source_width: src.0,
        source_height: src.1,
        thumb_width: thumb.size.0,
        thumb_height: thumb.size.1,
        css_to_output_scale: sx * f64::from(w) / f64::from(src.0),
        quality: main.quality,
        downgraded: main.downgraded,
        scale_applied: main.scale,
        thumb_quality: thumb.quality,
        thumb_downgraded: thumb.downgraded,
        badges_drawn: annotated.drawn,
        boxes_offscreen: annotated.offscreen,
        text_covered: annotated.text_covered,
        dct_scale_denom: dct_denom,
        timings_us: clock.finish(),
    })
}

/// Floor for the benchmark: libjpeg-turbo alone decoding `jpeg` DCT-scaled exactly as `run`
/// would, then encoding an output-sized and a thumbnail-sized image (cropped views of the
/// decoded pixels, no resampling). Returns microseconds.
/// The floor encodes as libjpeg-turbo does by itself: one thread (optimized Huffman tables, as
/// the floor always has; the core's first attempt uses standard ones on two threads).
const FLOOR_EFFORT: Effort = Effort::Small;

pub fn turbo_floor(jpeg: &[u8], opts: &Options) -> Result<u64> {
    let start = Instant::now();
    let header = read_header(jpeg)?;
    if header.format != Format::Jpeg {
        return Err(CoreError::UnknownFormat("turbo_floor needs a JPEG".into()));
    }
    check_dimensions(u64::from(header.width), u64::from(header.height))?;
    let out = fit(
        header.width,
        header.height,
        opts.max_width,
        opts.max_long_edge,
    );
    let decoded = decode(jpeg, &header, out)?.raster;
    let mut encoder = Encoder::new()?;
    let (w, h) = (out.0.min(decoded.width), out.1.min(decoded.height));
    let (stride, ch) = (decoded.stride(), decoded.channels);
    encoder.encode_view(
        &decoded.data,
        (w as usize, h as usize),
        stride,
        ch,
        opts.quality,
        FLOOR_EFFORT,
    )?;
    let tw = opts.thumb_width.min(w);
    let th = ((f64::from(h) * f64::from(tw) / f64::from(w)).round() as u32).clamp(1, h);
    encoder.encode_view(
        &decoded.data,
        (tw as usize, th as usize),
        stride,
        ch,
        opts.quality,
        FLOOR_EFFORT,
    )?;
    Ok(start.elapsed().as_micros() as u64)
}

#[cfg(test)]
mod mask_tests {
    use super::*;
    use crate::encode::Encoder;

    fn jpeg(w: u32, h: u32) -> Vec<u8> {
        Encoder::new()
            .unwrap()
            .encode(&Raster::filled(w, h, 3, [0, 255, 0]), 90)
            .unwrap()
    }

    fn run_with(masks: &[CssRect]) -> Result<Output> {
        let data = jpeg(64, 48);
        run(&Request {
            input: Input::Bytes(&data),
            options: Options::default(),
            boxes: &[],
            masks,
            text: &[],
            avoid_text: true,
            css: CssGeometry {
                device_pixel_ratio: 2.0,
                css_width: None,
                css_height: None,
            },
        })
    }

    #[test]
    fn a_mask_that_overflows_when_scaled_is_an_error_not_dropped() {
        // Finite in CSS px, infinite once multiplied by the device pixel ratio.
        let huge = CssRect {
            x: -1.5e308,
            y: 0.0,
            width: 1.7e308,
            height: 10.0,
        };
        let err = run_with(&[huge]).unwrap_err();
        assert!(err.to_string().contains("cannot be placed"), "{err}");
    }

    #[test]
    fn a_mask_in_range_still_masks() {
        let r = CssRect {
            x: 0.0,
            y: 0.0,
            width: 32.0,
            height: 24.0,
        };
        let out = run_with(&[r]).unwrap();
        assert_eq!((out.width, out.height), (64, 48));
    }

    /// Detail (a pattern, not a flat colour), channel values in base..base + span: a second
    /// encoding shows in the bytes, and a mask's black stands out.
    fn textured(w: u32, h: u32, base: u8, span: usize) -> Raster {
        let mut px = Raster::filled(w, h, 3, [0, 0, 0]);
        for (i, v) in px.data.iter_mut().enumerate() {
            *v = base + ((i * 7919) % span) as u8;
        }
        px
    }

    fn plain(data: &[u8], source_quality: Option<u8>, masks: &[CssRect]) -> Result<Output> {
        run(&Request {
            input: Input::Bytes(data),
            options: Options {
                source_quality,
                ..Options::default()
            },
            boxes: &[],
            masks,
            text: &[],
            avoid_text: true,
            css: CssGeometry {
                device_pixel_ratio: 1.0,
                css_width: None,
                css_height: None,
            },
        })
    }

    #[test]
    fn a_browser_jpeg_at_output_size_with_nothing_to_paint_is_kept_byte_for_byte() {
        let px = textured(640, 360, 0, 251);
        let data = Encoder::new().unwrap().encode(&px, 60).unwrap();
        let kept = plain(&data, Some(60), &[]).unwrap();
        assert_eq!(kept.jpeg, data);
        assert_eq!((kept.width, kept.height, kept.quality), (640, 360, 60));
        assert_eq!((kept.thumb_width, kept.thumb_height), (320, 180));
        // An unknown or a higher source quality: decoded and encoded again.
        assert_ne!(plain(&data, None, &[]).unwrap().jpeg, data);
        assert_ne!(plain(&data, Some(90), &[]).unwrap().jpeg, data);
        // A broken stream is not passed on.
        let broken = &data[..data.len() / 2];
        assert!(plain(broken, Some(60), &[]).is_err());
    }

    #[test]
    fn a_browser_jpeg_at_output_size_is_masked_in_its_coefficients() {
        let px = textured(640, 360, 40, 200);
        let data = Encoder::new().unwrap().encode(&px, 60).unwrap();
        let secret = CssRect {
            x: 100.5,
            y: 50.0,
            width: 300.0,
            height: 20.0,
        };
        let out = plain(&data, Some(60), &[secret]).unwrap();
        let stages: Vec<&str> = out.timings_us.iter().map(|t| t.0).collect();
        assert!(
            stages.contains(&"mask") && !stages.contains(&"encode"),
            "{stages:?}"
        );
        let header = read_header(&out.jpeg).unwrap();
        let img = decode(&out.jpeg, &header, (640, 360)).unwrap().raster;
        let before = decode(&data, &read_header(&data).unwrap(), (640, 360))
            .unwrap()
            .raster;
        for y in 50..70 {
            for x in 100..401 {
                assert!(img.pixel(x, y).iter().all(|&c| c <= 48), "({x},{y})");
            }
        }
        assert_eq!(img.pixel(600, 300), before.pixel(600, 300));
        // The thumbnail (made from the input meanwhile) is masked too: all of the secret's
        // box at half size, x 50.25..200.25, y 25..35.
        let t = decode(
            &out.thumbnail,
            &read_header(&out.thumbnail).unwrap(),
            (320, 180),
        )
        .unwrap()
        .raster;
        for y in 25..35 {
            for x in 50..201 {
                assert!(
                    t.pixel(x, y).iter().all(|&c| c <= 24),
                    "({x},{y}) {:?}",
                    t.pixel(x, y)
                );
            }
        }
        assert!(
            t.pixel(300, 150).iter().any(|&c| c > 40),
            "the rest is the picture"
        );
    }
    #[test]
    fn a_secret_on_a_dct_scaled_decode_blacks_its_whole_scaled_mcu() {
        // 2560 px decoded at 1/2: MCUs are 8 output px. A secret at source x 40..44 lies in the
        // MCU of output x 16..24, all of whose pixels depend on it (the old grid of 9 px left
        // x 16 and 17 of it as they were).
        let px = textured(2560, 64, 120, 120);
        let data = Encoder::new().unwrap().encode(&px, 90).unwrap();
        let secret = CssRect {
            x: 40.0,
            y: 20.0,
            width: 4.0,
            height: 4.0,
        };
        let out = plain(&data, None, &[secret]).unwrap();
        assert_eq!((out.width, out.dct_scale_denom), (1280, 2));
        let img = decode(&out.jpeg, &read_header(&out.jpeg).unwrap(), (1280, 32))
            .unwrap()
            .raster;
        for x in 16..24 {
            for y in 10..14 {
                assert!(
                    img.pixel(x, y).iter().all(|&c| c <= 40),
                    "({x},{y}) {:?}",
                    img.pixel(x, y)
                );
            }
        }
    }
}

#[cfg(test)]
mod prepared_tests {
    use super::*;
    use crate::encode::Encoder;

    const BOXES: [BoxSpec; 2] = [
        BoxSpec {
            rect: CssRect {
                x: 40.0,
                y: 30.0,
                width: 200.0,
                height: 40.0,
            },
            label: 1,
        },
        BoxSpec {
            rect: CssRect {
                x: 300.0,
                y: 200.0,
                width: 90.0,
                height: 30.0,
            },
            label: 2,
        },
    ];
    const MASK: [CssRect; 1] = [CssRect {
        x: 100.0,
        y: 120.0,
        width: 150.0,
        height: 24.0,
    }];

    fn request<'a>(data: &'a [u8], boxes: &'a [BoxSpec], max_width: u32) -> Request<'a> {
        Request {
            input: Input::Bytes(data),
            options: Options {
                max_width,
                source_quality: Some(60),
                ..Options::default()
            },
            boxes,
            masks: &MASK,
            text: &[],
            avoid_text: true,
            css: CssGeometry {
                device_pixel_ratio: 1.0,
                css_width: None,
                css_height: None,
            },
        }
    }

    fn source() -> Vec<u8> {
        let px = crate::raster::painted(640, 360, |x, y| {
            [
                (x * 3 % 256) as u8,
                (y * 5 % 256) as u8,
                ((x + y) % 256) as u8,
            ]
        });
        Encoder::new().unwrap().encode(&px, 60).unwrap()
    }

    #[test]
    fn prepare_then_finish_is_run() {
        let data = source();
        for max_width in [640, 320] {
            let req = request(&data, &BOXES, max_width);
            let whole = run(&req).unwrap();
            let split = finish(prepare(&req).unwrap(), &req).unwrap();
            assert_eq!(split.jpeg, whole.jpeg, "max_width {max_width}");
            assert_eq!(split.thumbnail, whole.thumbnail);
            assert_eq!(
                (split.width, split.height, split.badges_drawn),
                (whole.width, whole.height, whole.badges_drawn)
            );
        }
    }

    #[test]
    fn finish_does_not_count_the_wait_before_it() {
        let data = source();
        let req = request(&data, &BOXES, 640);
        let prepared = prepare(&req).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(60));
        let out = finish(prepared, &req).unwrap();
        let (total, stages) = out.timings_us.split_last().unwrap();
        assert_eq!(total.0, "total");
        // The stages add up to the total; the 60 ms between the two calls are in neither.
        let worked: u64 = stages.iter().map(|s| s.1).sum();
        assert!(total.1 < worked + 20_000, "{:?}", out.timings_us);
    }

    #[test]
    fn prepare_refuses_what_run_refuses() {
        let data = source();
        let mut bad = request(&data, &BOXES, 640);
        bad.masks = &[CssRect {
            x: f64::NAN,
            y: 0.0,
            width: 1.0,
            height: 1.0,
        }];
        assert!(prepare(&bad).is_err());
        assert!(prepare(&request(&data[..100], &BOXES, 640)).is_err());
    }
}
