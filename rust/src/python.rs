//! The thin PyO3 layer: plain arguments in, a dict out, errors as `shotbridge.wire.errors` classes.
//! All pixel work runs with the GIL released (`Python::detach`), and a Rust panic is caught
//! and raised as `CoreInternalError` instead of aborting the interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::diff::{self, DiffOptions, Frame};
use crate::diffimage;
use crate::error::CoreError;
use crate::geometry::CssGeometry;
use crate::input::Input;
use crate::limits::{MAX_BADGES, MAX_PIXELS, MAX_SIDE, MAX_TEXT_RECTS, MIN_MAX_BYTES};
use crate::pipeline::{self, BoxSpec, CssRect, Options, Output, Request};

pyo3::import_exception!(shotbridge.wire.errors, EmptyInputError);
pyo3::import_exception!(shotbridge.wire.errors, Base64Error);
pyo3::import_exception!(shotbridge.wire.errors, UnknownFormatError);
pyo3::import_exception!(shotbridge.wire.errors, CorruptImageError);
pyo3::import_exception!(shotbridge.wire.errors, ImageTooLargeError);
pyo3::import_exception!(shotbridge.wire.errors, CoreInternalError);
pyo3::import_exception!(shotbridge.wire.errors, InvalidInputError);

fn to_py(e: CoreError) -> PyErr {
    let msg = e.message().to_owned();
    match e {
        CoreError::Empty(_) => EmptyInputError::new_err(msg),
        CoreError::Base64(_) => Base64Error::new_err(msg),
        CoreError::UnknownFormat(_) => UnknownFormatError::new_err(msg),
        CoreError::Corrupt(_) => CorruptImageError::new_err(msg),
        CoreError::TooLarge(_) => ImageTooLargeError::new_err(msg),
        // Every refusal is an ImageError: callers catch one family.
        CoreError::Options(_) => InvalidInputError::new_err(msg),
        CoreError::Internal(_) => CoreInternalError::new_err(msg),
    }
}

/// Run `work` without the GIL; a panic becomes `CoreError::Internal`.
fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, CoreError> + Send,
) -> PyResult<T> {
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(CoreError::Internal(format!(
                "internal error in the image core: {what}"
            )))
        })
    })
    .map_err(to_py)
}

/// Borrow the caller's bytes or str without copying (both are immutable, so reading them with
/// the GIL released is safe).
fn input<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<Input<'a>> {
    if let Ok(b) = data.cast::<PyBytes>() {
        Ok(Input::Bytes(b.as_bytes()))
    } else if let Ok(s) = data.cast::<PyString>() {
        // A lone surrogate cannot be base64 or a data: URL: a base64 error, not UnicodeEncodeError.
        let text = s
            .to_str()
            .map_err(|_| Base64Error::new_err("image text holds a lone surrogate: not base64"))?;
        Ok(Input::Text(text))
    } else {
        Err(InvalidInputError::new_err(
            "data must be bytes or str (a data: URL or base64)",
        ))
    }
}

fn result_dict<'py>(py: Python<'py>, out: Output) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("jpeg", PyBytes::new(py, &out.jpeg))?;
    d.set_item("thumbnail", PyBytes::new(py, &out.thumbnail))?;
    d.set_item("width", out.width)?;
    d.set_item("height", out.height)?;
    d.set_item("source_width", out.source_width)?;
    d.set_item("source_height", out.source_height)?;
    d.set_item("thumb_width", out.thumb_width)?;
    d.set_item("thumb_height", out.thumb_height)?;
    d.set_item("css_to_output_scale", out.css_to_output_scale)?;
    d.set_item("quality", out.quality)?;
    d.set_item("downgraded", out.downgraded)?;
    d.set_item("scale_applied", out.scale_applied)?;
    d.set_item("thumb_quality", out.thumb_quality)?;
    d.set_item("thumb_downgraded", out.thumb_downgraded)?;
    d.set_item("badges_drawn", out.badges_drawn)?;
    d.set_item("boxes_offscreen", out.boxes_offscreen)?;
    d.set_item("text_covered", out.text_covered)?;
    d.set_item("dct_scale_denom", out.dct_scale_denom)?;
    let timings = PyDict::new(py);
    for (stage, us) in out.timings_us {
        timings.set_item(stage, us)?;
    }
    d.set_item("timings_us", timings)?;
    Ok(d)
}

/// `Options` from `shotbridge.image.ShrinkOptions.model_dump()` (a key left out keeps its
/// default; an unknown one is refused, so a renamed option cannot be dropped silently).
fn options_from(given: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
    let mut o = Options::default();
    for (key, value) in given.map(|d| d.iter()).into_iter().flatten() {
        match key.extract::<String>()?.as_str() {
            "max_width" => o.max_width = value.extract()?,
            "max_long_edge" => o.max_long_edge = value.extract()?,
            "quality" => o.quality = value.extract()?,
            "min_quality" => o.min_quality = value.extract()?,
            "max_bytes" => o.max_bytes = value.extract()?,
            "thumb_width" => o.thumb_width = value.extract()?,
            "thumb_max_bytes" => o.thumb_max_bytes = value.extract()?,
            "thumbnail" => o.thumbnail = value.extract()?,
            other => {
                return Err(InvalidInputError::new_err(format!(
                    "unknown option {other:?}"
                )))
            }
        }
    }
    Ok(o)
}

type Rect4 = (f64, f64, f64, f64);
type Box5 = (f64, f64, f64, f64, u32);

fn css_rects(rects: Vec<Rect4>) -> Vec<CssRect> {
    rects
        .into_iter()
        .map(|(x, y, width, height)| CssRect {
            x,
            y,
            width,
            height,
        })
        .collect()
}

fn box_specs(boxes: Vec<Box5>) -> Vec<BoxSpec> {
    boxes
        .into_iter()
        .map(|(x, y, width, height, label)| BoxSpec {
            rect: CssRect {
                x,
                y,
                width,
                height,
            },
            label,
        })
        .collect()
}

/// Decode, shrink, mask, label and encode one screenshot. See `shotbridge.image.shrink`.
#[pyfunction]
#[pyo3(signature = (
    data, *, options=None, boxes=Vec::new(), masks=Vec::new(), device_pixel_ratio=1.0,
    css_width=None, css_height=None, source_quality=None, text=Vec::new(), avoid_text=true,
))]
#[allow(clippy::too_many_arguments)]
fn shrink<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
    boxes: Vec<Box5>,
    masks: Vec<Rect4>,
    device_pixel_ratio: f64,
    css_width: Option<f64>,
    css_height: Option<f64>,
    source_quality: Option<u8>,
    text: Vec<Rect4>,
    avoid_text: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let input = input(data)?;
    let options = Options {
        source_quality,
        ..options_from(options)?
    };
    let (boxes, masks, text) = (box_specs(boxes), css_rects(masks), css_rects(text));
    let req = Request {
        input,
        options,
        boxes: &boxes,
        masks: &masks,
        text: &text,
        avoid_text,
        css: CssGeometry {
            device_pixel_ratio,
            css_width,
            css_height,
        },
    };
    let out = detached(py, || pipeline::run(&req))?;
    result_dict(py, out)
}

/// A screenshot decoded for labelling, masks painted (`prepare`); `finish` labels and encodes
/// it, once. The host decodes its early pixels this way while their labels are on their way.
#[pyclass(module = "shotbridge._core", name = "Prepared")]
struct PyPrepared {
    held: Option<Held>,
}

/// What `finish` needs besides the labels: the prepared pixels and the request they came from.
struct Held {
    prepared: pipeline::Prepared,
    options: Options,
    masks: Vec<CssRect>,
    css: CssGeometry,
}

/// Decode and mask one screenshot for `finish`. See `shotbridge.image.prepare`.
#[pyfunction]
#[pyo3(signature = (
    data, *, options=None, masks=Vec::new(), device_pixel_ratio=1.0, css_width=None,
    css_height=None,
))]
fn prepare(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
    masks: Vec<Rect4>,
    device_pixel_ratio: f64,
    css_width: Option<f64>,
    css_height: Option<f64>,
) -> PyResult<PyPrepared> {
    let input = input(data)?;
    let options = options_from(options)?;
    let masks = css_rects(masks);
    let css = CssGeometry {
        device_pixel_ratio,
        css_width,
        css_height,
    };
    let req = Request {
        input,
        options,
        boxes: &[],
        masks: &masks,
        text: &[],
        avoid_text: true,
        css,
    };
    let prepared = detached(py, || pipeline::prepare(&req))?;
    Ok(PyPrepared {
        held: Some(Held {
            prepared,
            options,
            masks,
            css,
        }),
    })
}

/// Label and encode a prepared screenshot. See `shotbridge.image.finish`.
#[pyfunction]
#[pyo3(signature = (prepared, *, boxes=Vec::new(), text=Vec::new(), avoid_text=true))]
fn finish<'py>(
    py: Python<'py>,
    prepared: &Bound<'py, PyPrepared>,
    boxes: Vec<Box5>,
    text: Vec<Rect4>,
    avoid_text: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let held =
        prepared.borrow_mut().held.take().ok_or_else(|| {
            InvalidInputError::new_err("this prepared image was finished already")
        })?;
    let (boxes, text) = (box_specs(boxes), css_rects(text));
    let out = detached(py, move || {
        let req = Request {
            input: Input::Bytes(&[]),
            options: held.options,
            boxes: &boxes,
            masks: &held.masks,
            text: &text,
            avoid_text,
            css: held.css,
        };
        pipeline::finish(held.prepared, &req)
    })?;
    result_dict(py, out)
}

/// Benchmark floor: libjpeg-turbo alone (DCT-scaled decode as `shrink` does, then encoding an
/// output-sized and a thumbnail-sized image). Returns elapsed microseconds.
#[pyfunction]
#[pyo3(signature = (jpeg, *, max_width=1280, max_long_edge=1568, quality=60, thumb_width=320))]
fn turbo_floor(
    py: Python<'_>,
    jpeg: &[u8],
    max_width: u32,
    max_long_edge: u32,
    quality: u8,
    thumb_width: u32,
) -> PyResult<u64> {
    let options = Options {
        max_width,
        max_long_edge,
        quality,
        thumb_width,
        ..Options::default()
    };
    detached(py, || {
        options.validate()?;
        pipeline::turbo_floor(jpeg, &options)
    })
}

/// Compare two screenshots of one page (see `shotbridge.diff.compare`): pixelmatch's YIQ
/// threshold and anti-aliasing test after aligning both in page coordinates; regions are
/// (x0, y0, x1, y1, changed) in pixels of `after`.
#[pyfunction(name = "diff")]
#[pyo3(signature = (
    before, after, *, before_scroll=(0.0, 0.0), after_scroll=(0.0, 0.0), before_scale=1.0,
    after_scale=1.0, threshold=0.1, include_aa=false, max_regions=10, min_region_pixels=1,
    image=false, max_width=1280, max_long_edge=1568, quality=60, min_quality=30,
    max_bytes=500_000, max_crops=3,
))]
#[allow(clippy::too_many_arguments)]
fn diff_images<'py>(
    py: Python<'py>,
    before: &Bound<'py, PyAny>,
    after: &Bound<'py, PyAny>,
    before_scroll: (f64, f64),
    after_scroll: (f64, f64),
    before_scale: f64,
    after_scale: f64,
    threshold: f64,
    include_aa: bool,
    max_regions: usize,
    min_region_pixels: u64,
    image: bool,
    max_width: u32,
    max_long_edge: u32,
    quality: u8,
    min_quality: u8,
    max_bytes: usize,
    max_crops: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let b = Frame {
        input: input(before)?,
        scroll: before_scroll,
        scale: before_scale,
    };
    let a = Frame {
        input: input(after)?,
        scroll: after_scroll,
        scale: after_scale,
    };
    let opts = DiffOptions {
        threshold,
        include_aa,
        max_regions,
        min_region_pixels,
    };
    let render = Options {
        max_width,
        max_long_edge,
        quality,
        min_quality,
        max_bytes,
        ..Options::default()
    };
    let (cmp, rendered) = detached(py, || {
        let cmp = diff::compare(&b, &a, &opts)?;
        let rendered = if image {
            Some(diffimage::render(&cmp, &render, max_crops)?)
        } else {
            None
        };
        Ok((cmp, rendered))
    })?;
    let d = PyDict::new(py);
    d.set_item("changed", cmp.changed)?;
    d.set_item("compared", cmp.compared)?;
    d.set_item("offset", cmp.aligned.offset)?;
    let o = cmp.aligned.overlap;
    d.set_item("overlap", (o.x0, o.y0, o.x1, o.y1))?;
    d.set_item("width", cmp.aligned.after.width)?;
    d.set_item("height", cmp.aligned.after.height)?;
    let regions: Vec<(i64, i64, i64, i64, u64)> = cmp
        .regions
        .iter()
        .map(|r| (r.rect.x0, r.rect.y0, r.rect.x1, r.rect.y1, r.changed))
        .collect();
    d.set_item("regions", regions)?;
    match rendered {
        Some(r) => {
            d.set_item("image", PyBytes::new(py, &r.jpeg))?;
            d.set_item("image_width", r.width)?;
            d.set_item("image_height", r.height)?;
            d.set_item("image_quality", r.quality)?;
            d.set_item("crops", r.crops)?;
        }
        None => d.set_item("image", py.None())?,
    }
    let timings = PyDict::new(py);
    for (stage, us) in cmp.timings_us {
        timings.set_item(stage, us)?;
    }
    d.set_item("timings_us", timings)?;
    Ok(d)
}

/// Test hook: panics inside the core, to prove panics surface as `CoreInternalError`.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    detached(py, || -> Result<(), CoreError> {
        panic!("deliberate test panic")
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(shrink, m)?)?;
    m.add_function(wrap_pyfunction!(prepare, m)?)?;
    m.add_function(wrap_pyfunction!(finish, m)?)?;
    m.add_class::<PyPrepared>()?;
    m.add_function(wrap_pyfunction!(turbo_floor, m)?)?;
    m.add_function(wrap_pyfunction!(diff_images, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("MAX_PIXELS", MAX_PIXELS)?;
    m.add("MAX_SIDE", MAX_SIDE)?;
    m.add("MIN_MAX_BYTES", MIN_MAX_BYTES)?;
    m.add("MAX_BADGES", MAX_BADGES)?;
    m.add("MAX_TEXT_RECTS", MAX_TEXT_RECTS)?;
    Ok(())
}
