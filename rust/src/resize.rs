//! SIMD resampling (fast_image_resize, Catmull-Rom convolution).

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::error::{CoreError, Result};
use crate::raster::Raster;

fn pixel_type(channels: usize) -> PixelType {
    if channels == 4 {
        PixelType::U8x4
    } else {
        PixelType::U8x3
    }
}

/// Resample `src` to `width` x `height`. Catmull-Rom (a sharp cubic) keeps small text as
/// crisp as Lanczos3 does to the eye, with a 2-px instead of 3-px kernel: ~35 % faster here.
pub fn resize(src: &Raster, width: u32, height: u32) -> Result<Raster> {
    if (src.width, src.height) == (width, height) {
        return Ok(src.clone());
    }
    let internal = |e: &dyn std::fmt::Display| CoreError::Internal(format!("resize failed: {e}"));
    let pt = pixel_type(src.channels);
    let src_view = ImageRef::new(src.width, src.height, &src.data, pt).map_err(|e| internal(&e))?;
    let mut dst = Image::new(width, height, pt);
    let options = ResizeOptions::new()
        .resize_alg(ResizeAlg::Convolution(FilterType::CatmullRom))
        .use_alpha(false); // rasters are opaque: skip alpha premultiplication
    Resizer::new()
        .resize(&src_view, &mut dst, &options)
        .map_err(|e| internal(&e))?;
    Ok(Raster::new(width, height, src.channels, dst.into_vec()))
}

/// Resample only if the size changes, consuming `src` (no copy when it does not).
pub fn resize_owned(src: Raster, width: u32, height: u32) -> Result<Raster> {
    if (src.width, src.height) == (width, height) {
        Ok(src)
    } else {
        resize(&src, width, height)
    }
}
