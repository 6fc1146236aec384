//! Baseline JPEG encoding with libjpeg-turbo: 4:2:0 chroma, optimized Huffman tables
//! (a few % smaller for free at these sizes).

use turbojpeg::{Compressor, Image, PixelFormat, Subsamp};

use crate::error::{CoreError, Result};
use crate::raster::Raster;

pub struct Encoder {
    compressor: Compressor,
}

fn internal(e: turbojpeg::Error) -> CoreError {
    CoreError::Internal(format!("JPEG encoder failed: {e}"))
}

impl Encoder {
    pub fn new() -> Result<Encoder> {
        let mut compressor = Compressor::new().map_err(internal)?;
        compressor.set_subsamp(Subsamp::Sub2x2).map_err(internal)?;
        compressor.set_optimize(true).map_err(internal)?;
        Ok(Encoder { compressor })
    }

    pub fn encode(&mut self, img: &Raster, quality: u8) -> Result<Vec<u8>> {
        let size = (img.width as usize, img.height as usize);
        self.encode_view(&img.data, size, img.stride(), img.channels, quality)
    }

    /// Encode a `size` view into `pixels` whose rows are `pitch` bytes apart.
    pub fn encode_view(
        &mut self,
        pixels: &[u8],
        size: (usize, usize),
        pitch: usize,
        channels: usize,
        quality: u8,
    ) -> Result<Vec<u8>> {
        self.compressor
            .set_quality(i32::from(quality))
            .map_err(internal)?;
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
        self.compressor.compress_to_vec(image).map_err(internal)
    }
}
