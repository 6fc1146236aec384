//! What the drawing code (masks, labels) needs of an image, whatever its pixel layout: an RGB
//! `Raster`, or the YCbCr planes a browser JPEG decodes to (`planes::Planes`), where labels are
//! drawn without a colour conversion each way.

use crate::geometry::IRect;
use crate::raster::{Patch, Raster, Rgb};

pub trait Canvas {
    /// The pixels saved from under a drawing, to undo it (`save`).
    type Patch;

    fn size(&self) -> (u32, u32);

    /// Fill `rect` (clipped to the image) with an opaque colour.
    fn fill_rect(&mut self, rect: IRect, rgb: Rgb);

    /// Blend `rgb` over one pixel with coverage `alpha` (0-255); off-image pixels are ignored.
    fn blend(&mut self, x: i64, y: i64, rgb: Rgb, alpha: u8);

    /// Save what is under `rect` (clipped) into `undo`, before drawing over it.
    fn save(&self, rect: IRect, undo: &mut Vec<Self::Patch>);

    fn bounds(&self) -> IRect {
        let (w, h) = self.size();
        IRect::new(0, 0, i64::from(w), i64::from(h))
    }
}

impl Canvas for Raster {
    type Patch = Patch;

    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn fill_rect(&mut self, rect: IRect, rgb: Rgb) {
        Raster::fill_rect(self, rect, rgb);
    }

    fn blend(&mut self, x: i64, y: i64, rgb: Rgb, alpha: u8) {
        Raster::blend(self, x, y, rgb, alpha);
    }

    fn save(&self, rect: IRect, undo: &mut Vec<Patch>) {
        Raster::save(self, rect, undo);
    }
}
