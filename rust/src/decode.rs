//! PNG (the `png` crate: streaming inflate + SIMD unfiltering, the fastest Rust PNG decoder
//! on our screenshot corpus) and JPEG (libjpeg-turbo) decoding into an opaque RGB/RGBX raster.
//! JPEGs are decoded DCT-scaled (1/2, 1/4, 1/8) when the output is at most half the source:
//! HiDPI captures are 2x their CSS size, and skipping those pixels is the largest saving.

use png::{ColorType, Transformations};
use turbojpeg::{
    Colorspace, DecompressHeader, Decompressor, Image, PixelFormat, ScalingFactor, Subsamp,
    YuvImage,
};

use crate::error::{CoreError, Result};
use crate::header::{Format, Header};
use crate::limits::MAX_PIXELS;
use crate::planes::Planes;
use crate::raster::{flatten_alpha, gray_to_color, Raster};

#[derive(Debug)]
pub struct Decoded<P = Raster> {
    pub raster: P,
    /// 1, 2, 4 or 8: the JPEG DCT scaling denominator used (1 for PNG).
    pub dct_denom: u32,
}

/// The largest denominator in {8, 4, 2} whose scaled size still covers `target`, else 1.
/// libjpeg-turbo rounds scaled sizes up (ceil), and so does this.
pub fn dct_denominator(src: (u32, u32), target: (u32, u32)) -> u32 {
    [8u32, 4, 2]
        .into_iter()
        .find(|&d| src.0.div_ceil(d) >= target.0 && src.1.div_ceil(d) >= target.1)
        .unwrap_or(1)
}

/// Decode `data` (whose header was already checked against the limits) for an output of
/// `target` size.
pub fn decode(data: &[u8], header: &Header, target: (u32, u32)) -> Result<Decoded> {
    match header.format {
        Format::Png => Ok(Decoded {
            raster: decode_png(data)?,
            dct_denom: 1,
        }),
        Format::Jpeg => decode_jpeg(data, header, target),
    }
}

fn corrupt_png(e: impl std::fmt::Display) -> CoreError {
    CoreError::Corrupt(format!("truncated or corrupt PNG: {e}"))
}

fn decode_png(data: &[u8]) -> Result<Raster> {
    let mut dec = png::Decoder::new(std::io::Cursor::new(data));
    // The header was already checked against MAX_PIXELS; allow that much RGBA plus slack.
    dec.set_limits(png::Limits {
        bytes: MAX_PIXELS as usize * 4 + (1 << 20),
    });
    dec.set_transformations(Transformations::EXPAND | Transformations::STRIP_16);
    let mut reader = dec.read_info().map_err(corrupt_png)?;
    let (color, _) = reader.output_color_type();
    let len = reader
        .output_buffer_size()
        .ok_or_else(|| corrupt_png("image too large"))?;
    let mut pixels = vec![0u8; len];
    let frame = reader.next_frame(&mut pixels).map_err(corrupt_png)?;
    let (w, h) = (frame.width, frame.height);
    pixels.truncate(frame.buffer_size());
    let (channels, mut data) = match color {
        ColorType::Rgb => (3, pixels),
        ColorType::Rgba => (4, pixels),
        ColorType::Grayscale => (3, gray_to_color(&pixels, 1)),
        ColorType::GrayscaleAlpha => (4, gray_to_color(&pixels, 2)),
        ColorType::Indexed => return Err(corrupt_png("palette was not expanded")),
    };
    if data.len() != w as usize * h as usize * channels {
        return Err(corrupt_png("unexpected pixel buffer size"));
    }
    if channels == 4 {
        flatten_alpha(&mut data);
    }
    Ok(Raster::new(w, h, channels, data))
}

fn corrupt_jpeg(e: turbojpeg::Error) -> CoreError {
    CoreError::Corrupt(format!("truncated or corrupt JPEG: {e}"))
}

/// A decompressor that has read `data`'s header.
fn open_jpeg(data: &[u8]) -> Result<(Decompressor, DecompressHeader)> {
    let mut dec = Decompressor::new()
        .map_err(|e| CoreError::Internal(format!("libjpeg-turbo init failed: {e}")))?;
    let info = dec.read_header(data).map_err(corrupt_jpeg)?;
    Ok((dec, info))
}

fn decode_jpeg(data: &[u8], header: &Header, target: (u32, u32)) -> Result<Decoded> {
    let (mut dec, info) = open_jpeg(data)?;
    if matches!(info.colorspace, Colorspace::CMYK | Colorspace::YCCK) {
        return Err(CoreError::UnknownFormat(
            "unsupported JPEG: CMYK colour".into(),
        ));
    }
    let denom = if info.is_lossless {
        1 // lossless JPEGs cannot be DCT-scaled
    } else {
        dct_denominator((header.width, header.height), target)
    };
    let factor = ScalingFactor::new(1, denom as usize);
    dec.set_scaling_factor(factor).map_err(corrupt_jpeg)?;
    // The output is subsampled again (4:2:0): smooth chroma upsampling here buys nothing.
    dec.set_fast_upsample(true).map_err(corrupt_jpeg)?;
    let scaled = info.scaled(factor);
    let (w, h) = (scaled.width, scaled.height);
    let mut image = Image {
        pixels: vec![0u8; w * h * 3],
        width: w,
        pitch: w * 3,
        height: h,
        format: PixelFormat::RGB,
    };
    dec.decompress(data, image.as_deref_mut())
        .map_err(corrupt_jpeg)?;
    Ok(Decoded {
        raster: Raster::new(w as u32, h as u32, 3, image.pixels),
        dct_denom: denom,
    })
}

/// `data` decoded to its 4:2:0 YCbCr planes (DCT-scaled like `decode`), when that gives an
/// image of exactly `target` size: a browser's JPEG at its output size, or a HiDPI one at half.
/// None for anything else (other subsampling, grey, lossless, a size that needs resampling):
/// the caller decodes to RGB.
pub fn decode_planes(
    data: &[u8],
    header: &Header,
    target: (u32, u32),
) -> Result<Option<Decoded<Planes>>> {
    if header.format != Format::Jpeg {
        return Ok(None);
    }
    let (mut dec, info) = open_jpeg(data)?;
    if info.is_lossless || info.subsamp != Subsamp::Sub2x2 || info.colorspace != Colorspace::YCbCr {
        return Ok(None);
    }
    let denom = dct_denominator((header.width, header.height), target);
    let factor = ScalingFactor::new(1, denom as usize);
    let scaled = info.scaled(factor);
    if (scaled.width, scaled.height) != (target.0 as usize, target.1 as usize) {
        return Ok(None);
    }
    dec.set_scaling_factor(factor).map_err(corrupt_jpeg)?;
    let mut planes = Planes::zeroed(target.0, target.1);
    let image = YuvImage {
        pixels: planes.buffer_mut(),
        width: scaled.width,
        align: 1,
        height: scaled.height,
        subsamp: Subsamp::Sub2x2,
    };
    dec.decompress_to_yuv(data, image).map_err(corrupt_jpeg)?;
    Ok(Some(Decoded {
        raster: planes,
        dct_denom: denom,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dct_denominator_only_when_target_is_at_most_half() {
        assert_eq!(dct_denominator((2560, 1440), (1280, 720)), 2);
        assert_eq!(dct_denominator((3840, 2160), (1280, 720)), 2);
        assert_eq!(dct_denominator((7680, 4320), (1280, 720)), 4);
        assert_eq!(dct_denominator((1920, 1080), (1280, 720)), 1);
        assert_eq!(dct_denominator((1280, 16384), (123, 1568)), 8);
        assert_eq!(dct_denominator((3, 3), (1, 1)), 8); // libjpeg rounds up: ceil(3/8) = 1
    }
}
