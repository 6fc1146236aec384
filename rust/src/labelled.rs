//! The second half of the hot path: labels drawn on a decoded screenshot (its masks already
//! painted) and the image encoded within its byte budget, with its thumbnail. Two ways, one
//! result: on the YCbCr planes of a browser JPEG already at its output size (no colour
//! conversion either way), or on RGB pixels.

use crate::annotate::Annotated;
use crate::budget;
use crate::decode::decode;
use crate::encode::{Effort, Encoder};
use crate::error::{CoreError, Result};
use crate::header::read_header;
use crate::pipeline::{
    draw, fit_thumbnail, no_thumbnail, rgb_base, thumb_size, Clock, Options, Request,
};
use crate::planes::Planes;
use crate::raster::Raster;
use crate::resize::resize;

/// The main image and thumbnail within their budgets, and what the labels did.
pub(crate) struct Encoded {
    pub main: budget::Fitted,
    pub thumb: budget::Fitted,
    pub annotated: Annotated,
}

/// The main image within the options' byte budget, `encode` rendering it at a size and quality.
fn within_budget<F>(opts: &Options, out: (u32, u32), encode: F) -> Result<budget::Fitted>
where
    F: FnMut((u32, u32), u8, Effort) -> Result<Vec<u8>>,
{
    budget::fit(out, opts.quality, opts.min_quality, opts.max_bytes, encode)
}

/// Labels drawn on the YCbCr planes and encoded from them. A budget that needs a smaller image
/// decodes the input (`data`) again to RGB (rare: a browser's screenshot at q60 is far under it).
pub(crate) fn on_planes(
    mut planes: Planes,
    data: &[u8],
    req: &Request<'_>,
    src: (u32, u32),
    out: (u32, u32),
    clock: &mut Clock,
) -> Result<Encoded> {
    let opts = req.options;
    let annotated = draw(&mut planes, req, src, None)?;
    clock.lap("draw");
    let mut encoder = Encoder::new()?;
    let mut unlabelled: Option<Raster> = None;
    let main = within_budget(&opts, out, |size, q, effort| {
        if size == out {
            return encoder.encode_planes(&planes, q, effort);
        }
        let base = match unlabelled.take() {
            Some(base) => base,
            None => rgb_base(data, req, out)?,
        };
        let mut img = resize(&base, size.0, size.1)?;
        unlabelled = Some(base);
        draw(&mut img, req, src, None)?;
        encoder.encode_with(&img, q, effort)
    })?;
    clock.lap("encode");
    // From the labelled output itself (DCT-scaled): the planes have no RGB to resize.
    let thumb = if opts.thumbnail {
        let header = read_header(&main.bytes)?;
        let size = thumb_size(&opts, main.size);
        let px = decode(&main.bytes, &header, size)?.raster;
        fit_thumbnail(&opts, &px, size, &mut encoder)?
    } else {
        no_thumbnail()
    };
    clock.lap("thumbnail");
    Ok(Encoded {
        main,
        thumb,
        annotated,
    })
}

/// Labels drawn on RGB pixels and encoded, the thumbnail beside the main image.
pub(crate) fn on_rgb(
    base: Raster,
    req: &Request<'_>,
    src: (u32, u32),
    out: (u32, u32),
    clock: &mut Clock,
) -> Result<Encoded> {
    let opts = req.options;
    // Labels record the pixels they cover, so a budget downscale can recover the unlabelled
    // image and redraw crisp labels at the new size without a full copy kept around.
    let mut current = base;
    let mut undo = Vec::new();
    let annotated = draw(&mut current, req, src, Some(&mut undo))?;
    clock.lap("draw");

    // The thumbnail is made from the same (final, labelled) pixels as the main image. Both
    // are encoded at once on two threads: the thumbnail from the full-size pixels while the
    // main image gets its first attempt (which usually fits). Only if the budget then shrinks
    // the main image is the thumbnail made again from the smaller pixels. (The "encode" stage
    // time therefore covers both; "thumbnail" is only the rare redo.)
    let thumbnail = |img: &Raster, encoder: &mut Encoder| {
        fit_thumbnail(
            &opts,
            img,
            thumb_size(&opts, (img.width, img.height)),
            encoder,
        )
    };
    let mut encoder = Encoder::new()?;
    let (first, early_thumb) = if opts.thumbnail {
        std::thread::scope(|s| {
            let helper = s.spawn(|| thumbnail(&current, &mut Encoder::new()?));
            let first = encoder.encode(&current, opts.quality);
            let thumb = helper
                .join()
                .unwrap_or_else(|_| Err(CoreError::Internal("thumbnail thread panicked".into())));
            (first, Some(thumb))
        })
    } else {
        (encoder.encode(&current, opts.quality), None)
    };
    let mut first = Some(first?);
    let mut unlabelled: Option<Raster> = None;
    let main = within_budget(&opts, out, |size, q, effort| {
        if (size, q, effort) == (out, opts.quality, Effort::Fast) {
            if let Some(bytes) = first.take() {
                return Ok(bytes);
            }
        }
        if (current.width, current.height) != size {
            let base = unlabelled.get_or_insert_with(|| {
                let mut b = std::mem::take(&mut current);
                b.restore(&undo);
                b
            });
            let mut img = resize(base, size.0, size.1)?;
            draw(&mut img, req, src, None)?;
            current = img;
        }
        encoder.encode_with(&current, q, effort)
    })?;
    drop(unlabelled);
    clock.lap("encode");

    let thumb = match early_thumb {
        None => no_thumbnail(), // none asked for (`Options::thumbnail`)
        Some(early) if main.size == out => early?,
        Some(_) => thumbnail(&current, &mut encoder)?,
    };
    clock.lap("thumbnail");
    Ok(Encoded {
        main,
        thumb,
        annotated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::CssGeometry;
    use crate::header::read_header;
    use crate::input::Input;
    use crate::pipeline::{finish, prepare, BoxSpec, CssRect, Options, Output};

    const GREEN: [u8; 3] = [0, 255, 0];

    fn boxes() -> Vec<BoxSpec> {
        (0..12)
            .map(|i| BoxSpec {
                rect: CssRect {
                    x: 13.5 + f64::from(i % 4) * 150.0,
                    y: 21.0 + f64::from(i / 4) * 101.0,
                    width: 97.0 + f64::from(i),
                    height: 31.0,
                },
                label: i + 1,
            })
            .collect()
    }

    /// A page-like picture (bands of colour, fine detail) with a green secret at an odd place.
    fn page(w: u32, h: u32, secret: (u32, u32, u32, u32)) -> Raster {
        crate::raster::painted(w, h, |x, y| {
            let (sx, sy, sw, sh) = secret;
            if (sx..sx + sw).contains(&x) && (sy..sy + sh).contains(&y) {
                return GREEN;
            }
            let band = ((y / 40) * 53 % 200) as u8;
            [
                band + (x % 7) as u8 * 5,
                230 - band / 2,
                ((x + y) % 97) as u8 + 120,
            ]
        })
    }

    fn request<'a>(
        data: &'a [u8],
        boxes: &'a [BoxSpec],
        masks: &'a [CssRect],
        dpr: f64,
        max_bytes: usize,
    ) -> Request<'a> {
        Request {
            input: Input::Bytes(data),
            options: Options {
                max_bytes,
                source_quality: Some(60),
                ..Options::default()
            },
            boxes,
            masks,
            text: &[],
            avoid_text: true,
            css: CssGeometry {
                device_pixel_ratio: dpr,
                css_width: None,
                css_height: None,
            },
        }
    }

    fn pixels(jpeg: &[u8]) -> Raster {
        let header = read_header(jpeg).unwrap();
        decode(jpeg, &header, (header.width, header.height))
            .unwrap()
            .raster
    }

    /// The same request finished on RGB pixels, for comparison.
    fn on_rgb_too(req: &Request<'_>) -> Output {
        let mut prepared = prepare(req).unwrap();
        assert!(
            prepared.on_planes(),
            "a browser JPEG at output size is drawn on its planes"
        );
        prepared.redecode_as_rgb(req).unwrap();
        finish(prepared, req).unwrap()
    }

    /// Dark, and nothing of the secret's green (the page's own green is 130 or more): JPEG
    /// ringing from the page beside it is all that shows.
    fn assert_black(img: &Raster, (x0, y0, x1, y1): (u32, u32, u32, u32)) {
        for y in y0..y1 {
            for x in x0..x1 {
                let p = img.pixel(x, y);
                assert!(p[1] <= 40 && p.iter().all(|&c| c <= 56), "({x},{y}) {p:?}");
            }
        }
    }

    #[test]
    fn labels_on_the_planes_look_like_labels_on_rgb() {
        for (w, h) in [(640, 360), (639, 359)] {
            let data = Encoder::new()
                .unwrap()
                .encode(&page(w, h, (301, 201, 57, 15)), 60)
                .unwrap();
            let (boxes, masks) = (boxes(), []);
            let req = request(&data, &boxes, &masks, 1.0, 500_000);
            let planes = finish(prepare(&req).unwrap(), &req).unwrap();
            let rgb = on_rgb_too(&req);
            assert_eq!(
                (planes.width, planes.height, planes.badges_drawn),
                (rgb.width, rgb.height, rgb.badges_drawn)
            );
            assert_eq!(planes.badges_drawn, 12);
            let (a, b) = (pixels(&planes.jpeg), pixels(&rgb.jpeg));
            let diffs: Vec<u8> = a
                .data
                .iter()
                .zip(&b.data)
                .map(|(x, y)| x.abs_diff(*y))
                .collect();
            let mean = diffs.iter().map(|&d| f64::from(d)).sum::<f64>() / diffs.len() as f64;
            let far = diffs.iter().filter(|&&d| d > 24).count() as f64 / diffs.len() as f64;
            assert!(
                mean < 1.5 && far < 0.002,
                "{w}x{h}: mean {mean:.2}, far {far:.4}"
            );
        }
    }

    #[test]
    fn masks_on_the_planes_leave_nothing_of_the_secret() {
        // Output px; the mask is at odd CSS px, at 1x and at 2x (decoded at 1/2).
        // Clear of the labels (drawn over masks, as they should be).
        let secret = (581, 301, 47, 15);
        let mask = [CssRect {
            x: 581.0,
            y: 301.0,
            width: 47.0,
            height: 15.0,
        }];
        for dpr in [1u32, 2] {
            let (w, h) = (639, 359);
            let (s, d) = (secret, dpr);
            let source = page(w * d, h * d, (s.0 * d, s.1 * d, s.2 * d, s.3 * d));
            let data = Encoder::new().unwrap().encode(&source, 60).unwrap();
            let boxes = boxes();
            let mut req = request(&data, &boxes, &mask, f64::from(dpr), 500_000);
            req.options.max_width = w;
            let prepared = prepare(&req).unwrap();
            assert!(prepared.on_planes(), "{dpr}x");
            let out = finish(prepared, &req).unwrap();
            assert_eq!((out.width, out.height, out.dct_scale_denom), (w, h, dpr));
            assert_black(&pixels(&out.jpeg), (581, 301, 628, 316));
        }
    }

    #[test]
    fn a_budget_below_the_planes_size_shrinks_from_rgb_still_masked_and_labelled() {
        let data = Encoder::new()
            .unwrap()
            .encode(&page(640, 360, (560, 300, 60, 24)), 90)
            .unwrap();
        let boxes = boxes();
        let mask = [CssRect {
            x: 560.0,
            y: 300.0,
            width: 60.0,
            height: 24.0,
        }];
        let req = request(&data, &boxes, &mask, 1.0, 6_000);
        let out = finish(prepare(&req).unwrap(), &req).unwrap();
        assert!(out.jpeg.len() <= 6_000 && out.width < 640, "{}", out.width);
        assert_eq!(out.badges_drawn, 12);
        let img = pixels(&out.jpeg);
        let k = f64::from(out.width) / 640.0;
        let at = |v: u32| (f64::from(v) * k) as u32;
        // Inside the secret, away from the resampled edge.
        assert_black(&img, (at(560) + 2, at(300) + 2, at(620) - 2, at(324) - 2));
    }

    #[test]
    fn other_images_are_drawn_on_rgb() {
        let px = page(640, 360, (0, 0, 1, 1));
        let mut c = turbojpeg::Compressor::new().unwrap();
        c.set_subsamp(turbojpeg::Subsamp::None).unwrap();
        let full_chroma = c.compress_to_vec(turbojpeg::Image {
            pixels: &px.data[..],
            width: 640,
            pitch: 640 * 3,
            height: 360,
            format: turbojpeg::PixelFormat::RGB,
        });
        let sub = Encoder::new().unwrap().encode(&px, 60).unwrap();
        let boxes = boxes();
        for (data, max_width) in [(full_chroma.unwrap(), 1280), (sub, 500)] {
            let req = Request {
                options: Options {
                    max_width,
                    ..Options::default()
                },
                ..request(&data, &boxes, &[], 1.0, 500_000)
            };
            assert!(!prepare(&req).unwrap().on_planes());
        }
    }
}
