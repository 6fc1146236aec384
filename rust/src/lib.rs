//! shotbridge image core: one screenshot in, a small labelled JPEG (plus thumbnail) out.
//!
//! Module map, in pipeline order: `input` (bytes / data URL / base64) -> `header` (format and
//! size, before any allocation; `limits`) -> `decode` (RGB `raster`, or a browser JPEG's own
//! YCbCr `planes`) -> `resize` -> `mask` -> `annotate` (`placement`, `font`; both draw on a
//! `canvas`) -> `encode` under `budget` (`labelled`: the two ways). `pipeline` ties them
//! together and `python` is the PyO3 binding.

pub mod annotate;
pub mod budget;
pub mod canvas;
pub mod decode;
pub mod diff;
pub mod diffimage;
pub mod encode;
pub mod error;
pub mod font;
pub mod geometry;
pub mod header;
pub mod input;
pub mod labelled;
pub mod limits;
pub mod mask;
pub mod pipeline;
pub mod placement;
pub mod planes;
mod python;
pub mod raster;
pub mod resize;
pub mod wipe;
