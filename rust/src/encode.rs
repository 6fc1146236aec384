//! Baseline JPEG encoding with libjpeg-turbo, 4:2:0 chroma, at one of two efforts:
//!
//! - `Effort::Fast`, every image's first attempt: standard Huffman tables, and an image tall
//!   enough is encoded as two halves on two threads, joined at a restart marker (`join`).
//!   Measured at 1280x720 q60 on the corpus: optimized tables take twice as long (3.2 vs
//!   1.6 ms) for 4-11 % fewer bytes, and a half takes 0.7 ms.
//! - `Effort::Small`, only once the fast bytes are over budget: optimized Huffman tables.

use std::ops::Range;

use turbojpeg::{Compressor, Image, PixelFormat, Subsamp};

use crate::error::{CoreError, Result};
use crate::planes::Planes;
use crate::raster::Raster;

/// How hard an encode works for fewer bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    Fast,
    Small,
}

/// 4:2:0 MCUs are 16x16 image px.
const MCU: usize = 16;
/// Below this height one thread is as quick as two.
const MIN_SPLIT_HEIGHT: usize = 128;

pub struct Encoder {
    fast: Compressor,
    /// The second half's compressor (same settings as `fast`).
    helper: Compressor,
    small: Compressor,
}

fn internal(e: turbojpeg::Error) -> CoreError {
    CoreError::Internal(format!("JPEG encoder failed: {e}"))
}

fn compressor(optimize: bool) -> Result<Compressor> {
    let mut c = Compressor::new().map_err(internal)?;
    c.set_subsamp(Subsamp::Sub2x2).map_err(internal)?;
    c.set_optimize(optimize).map_err(internal)?;
    Ok(c)
}

/// Encode a `size` view into `pixels` whose rows are `pitch` bytes apart.
fn compress(
    c: &mut Compressor,
    pixels: &[u8],
    size: (usize, usize),
    pitch: usize,
    channels: usize,
    quality: u8,
) -> Result<Vec<u8>> {
    c.set_quality(i32::from(quality)).map_err(internal)?;
    let format = if channels == 4 {
        PixelFormat::RGBX
    } else {
        PixelFormat::RGB
    };
    let image = Image {
        pixels,
        width: size.0,
        pitch,
        height: size.1,
        format,
    };
    c.compress_to_vec(image).map_err(internal)
}

impl Encoder {
    pub fn new() -> Result<Encoder> {
        Ok(Encoder {
            fast: compressor(false)?,
            helper: compressor(false)?,
            small: compressor(true)?,
        })
    }

    /// The fast encode (see the module comment).
    pub fn encode(&mut self, img: &Raster, quality: u8) -> Result<Vec<u8>> {
        self.encode_with(img, quality, Effort::Fast)
    }

    pub fn encode_with(&mut self, img: &Raster, quality: u8, effort: Effort) -> Result<Vec<u8>> {
        let size = (img.width as usize, img.height as usize);
        self.encode_view(&img.data, size, img.stride(), img.channels, quality, effort)
    }

    /// Encode a `size` view into `pixels` whose rows are `pitch` bytes apart.
    pub fn encode_view(
        &mut self,
        pixels: &[u8],
        size: (usize, usize),
        pitch: usize,
        channels: usize,
        quality: u8,
        effort: Effort,
    ) -> Result<Vec<u8>> {
        self.encode_rows(size, effort, |c, rows| {
            let view = &pixels[rows.start * pitch..];
            compress(c, view, (size.0, rows.len()), pitch, channels, quality)
        })
    }

    /// Encode YCbCr planes as they are (no colour conversion, no chroma resampling).
    pub fn encode_planes(
        &mut self,
        planes: &Planes,
        quality: u8,
        effort: Effort,
    ) -> Result<Vec<u8>> {
        let size = (planes.width as usize, planes.height as usize);
        self.encode_rows(size, effort, |c, rows| {
            c.set_quality(i32::from(quality)).map_err(internal)?;
            c.compress_yuv_planes_to_vec(&planes.view(rows))
                .map_err(internal)
        })
    }

    /// Encode an image of `size` whose rows `compress` encodes with a given compressor: whole
    /// on one thread, or (fast effort) as two halves on two threads joined into one JPEG.
    fn encode_rows<F>(
        &mut self,
        size: (usize, usize),
        effort: Effort,
        compress: F,
    ) -> Result<Vec<u8>>
    where
        F: Fn(&mut Compressor, Range<usize>) -> Result<Vec<u8>> + Sync,
    {
        if effort == Effort::Small {
            return compress(&mut self.small, 0..size.1);
        }
        let Some(split) = split_rows(size) else {
            return compress(&mut self.fast, 0..size.1);
        };
        let (fast, helper) = (&mut self.fast, &mut self.helper);
        let compress = &compress;
        let (top, bottom) = std::thread::scope(|s| {
            let bottom = s.spawn(move || compress(helper, split..size.1));
            let top = compress(fast, 0..split);
            let bottom = bottom
                .join()
                .unwrap_or_else(|_| Err(CoreError::Internal("encoder thread panicked".into())));
            (top, bottom)
        });
        let (top, bottom) = (top?, bottom?);
        let restart_interval = size.0.div_ceil(MCU) * (split / MCU);
        match join(&top, &bottom, size.1, restart_interval) {
            Some(joined) => Ok(joined),
            // Not the layout `join` expects (never seen): one thread, whole image.
            None => compress(&mut self.fast, 0..size.1),
        }
    }
}

/// Where to cut an image into two halves for two threads: after the first half (rounded up) of
/// its MCU rows, so that the bottom half holds no more MCUs than the restart interval (the top
/// half's count, which must fit 16 bits). None: encode it whole.
fn split_rows((width, height): (usize, usize)) -> Option<usize> {
    if height < MIN_SPLIT_HEIGHT {
        return None;
    }
    let rows = height.div_ceil(MCU).div_ceil(2) * MCU;
    (width.div_ceil(MCU) * (rows / MCU) <= usize::from(u16::MAX)).then_some(rows)
}

/// Offsets in a JPEG as libjpeg-turbo writes it (marker segments back to back): the SOF0
/// payload, the SOS marker, and the first byte of scan data. None for any other layout.
fn layout(jpeg: &[u8]) -> Option<(usize, usize, usize)> {
    let mut i = 2;
    let mut sof = None;
    while i + 4 <= jpeg.len() && jpeg[i] == 0xFF {
        let len = usize::from(u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]));
        match jpeg[i + 1] {
            0xC0 => sof = Some(i + 4),
            0xDA => return Some((sof?, i, i + 2 + len)),
            _ => {}
        }
        i += 2 + len;
    }
    None
}

/// One baseline JPEG of `height` rows from two encoded with the same settings: the top one
/// (whose MCU count is `restart_interval`) and the bottom one (with at most as many MCUs, so
/// no second restart marker is due). A restart marker between the
/// two scans resets the DC predictors, which is exactly where the bottom one's scan started
/// from; both share their quantization and (standard) Huffman tables, so its scan data is
/// valid as the whole image's second restart interval. None if the two do not match.
fn join(top: &[u8], bottom: &[u8], height: usize, restart_interval: usize) -> Option<Vec<u8>> {
    let (t_sof, t_sos, t_scan) = layout(top)?;
    let (b_sof, _, b_scan) = layout(bottom)?;
    let eoi = [0xFF, 0xD9];
    let same_tables = top[..=t_sof] == bottom[..=b_sof]
        && top[t_sof + 3..t_scan] == bottom[b_sof + 3..b_scan]
        && top.ends_with(&eoi)
        && bottom.ends_with(&eoi);
    let height = u16::try_from(height).ok()?;
    let interval = u16::try_from(restart_interval).ok()?;
    if !same_tables {
        return None;
    }
    let mut out = Vec::with_capacity(top.len() + bottom.len());
    out.extend_from_slice(&top[..t_sos]);
    out[t_sof + 1..t_sof + 3].copy_from_slice(&height.to_be_bytes());
    out.extend_from_slice(&[0xFF, 0xDD, 0x00, 0x04]); // DRI
    out.extend_from_slice(&interval.to_be_bytes());
    out.extend_from_slice(&top[t_sos..top.len() - 2]);
    out.extend_from_slice(&[0xFF, 0xD0]); // RST0
    out.extend_from_slice(&bottom[b_scan..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use turbojpeg::Decompressor;

    /// Detail in every MCU and both chroma planes, so a misplaced block would show.
    fn picture(w: u32, h: u32) -> Raster {
        crate::raster::painted(w, h, |x, y| {
            [
                ((x * 7 + y * 3) % 256) as u8,
                ((x ^ y) % 256) as u8,
                (((x / 9) * 40 + (y / 5) * 17) % 256) as u8,
            ]
        })
    }

    fn pixels(jpeg: &[u8]) -> (usize, usize, Vec<u8>) {
        let mut d = Decompressor::new().unwrap();
        let info = d.read_header(jpeg).unwrap();
        let mut img = Image {
            pixels: vec![0u8; info.width * info.height * 3],
            width: info.width,
            pitch: info.width * 3,
            height: info.height,
            format: PixelFormat::RGB,
        };
        d.decompress(jpeg, img.as_deref_mut()).unwrap();
        (info.width, info.height, img.pixels)
    }

    #[test]
    fn two_halves_decode_to_the_pixels_of_one_encode() {
        for (w, h) in [
            (1280, 720),
            (1280, 721),
            (333, 130),
            (17, 500),
            (1280, 1568),
        ] {
            let img = picture(w, h);
            assert!(split_rows((w as usize, h as usize)).is_some(), "{w}x{h}");
            let joined = Encoder::new().unwrap().encode(&img, 60).unwrap();
            let size = (w as usize, h as usize);
            let whole = compress(
                &mut compressor(false).unwrap(),
                &img.data,
                size,
                img.stride(),
                3,
                60,
            )
            .unwrap();
            assert_eq!(pixels(&joined), pixels(&whole), "{w}x{h}");
            // A DRI segment, a restart marker, padding and a restarted DC prediction.
            assert!(
                joined.len() <= whole.len() + 64,
                "{w}x{h}: {} vs {}",
                joined.len(),
                whole.len()
            );
        }
    }

    #[test]
    fn small_images_are_encoded_whole() {
        assert_eq!(split_rows((1280, 127)), None);
        assert_eq!(split_rows((1280, 128)), Some(64));
        // 45 MCU rows: 23 on top, 22 below (a restart interval is the top's MCUs).
        assert_eq!(split_rows((1280, 720)), Some(368));
        assert_eq!(split_rows((333, 130)), Some(80));
        // 16 bits of MCUs: a very wide image is not split.
        assert_eq!(split_rows((16_384, 8_192)), None);
        let jpeg = Encoder::new()
            .unwrap()
            .encode(&picture(64, 40), 60)
            .unwrap();
        assert!(!jpeg.windows(2).any(|m| m == [0xFF, 0xDD]), "no DRI");
    }

    #[test]
    fn small_effort_is_smaller_and_the_same_picture_class() {
        let img = picture(640, 480);
        let mut enc = Encoder::new().unwrap();
        let fast = enc.encode_with(&img, 60, Effort::Fast).unwrap();
        let small = enc.encode_with(&img, 60, Effort::Small).unwrap();
        assert!(small.len() < fast.len());
        // Optimized tables change the bytes, never the pixels.
        assert_eq!(pixels(&small), pixels(&fast));
    }

    #[test]
    fn rgbx_rasters_encode_like_rgb() {
        let rgb = picture(300, 200);
        let rgbx: Vec<u8> = rgb
            .data
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
        let rgbx = Raster::new(300, 200, 4, rgbx);
        let mut enc = Encoder::new().unwrap();
        assert_eq!(
            enc.encode(&rgbx, 70).unwrap(),
            enc.encode(&rgb, 70).unwrap()
        );
    }
}
