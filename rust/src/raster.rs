//! An 8-bit RGB or RGBX pixel buffer and the few pixel operations the drawing code needs.
//! Four-channel rasters are always opaque (alpha flattened at decode time).

use crate::geometry::IRect;

pub type Rgb = [u8; 3];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Raster {
    pub width: u32,
    pub height: u32,
    /// 3 (RGB) or 4 (RGBX, X = 255).
    pub channels: usize,
    pub data: Vec<u8>,
}

impl Raster {
    pub fn new(width: u32, height: u32, channels: usize, data: Vec<u8>) -> Self {
        debug_assert!(channels == 3 || channels == 4);
        debug_assert_eq!(data.len(), width as usize * height as usize * channels);
        Raster {
            width,
            height,
            channels,
            data,
        }
    }

    pub fn filled(width: u32, height: u32, channels: usize, rgb: Rgb) -> Self {
        let mut px = [255u8; 4];
        px[..3].copy_from_slice(&rgb);
        let data = px[..channels].repeat(width as usize * height as usize);
        Raster::new(width, height, channels, data)
    }

    pub fn stride(&self) -> usize {
        self.width as usize * self.channels
    }

    pub fn bounds(&self) -> IRect {
        IRect::new(0, 0, i64::from(self.width), i64::from(self.height))
    }

    pub fn pixel(&self, x: u32, y: u32) -> Rgb {
        let i = y as usize * self.stride() + x as usize * self.channels;
        [self.data[i], self.data[i + 1], self.data[i + 2]]
    }

    /// Fill `rect` (clipped to the image) with an opaque colour.
    pub fn fill_rect(&mut self, rect: IRect, rgb: Rgb) {
        let Some(r) = rect.clip(self.bounds()) else {
            return;
        };
        let ch = self.channels;
        let stride = self.stride();
        let mut px = [255u8; 4];
        px[..3].copy_from_slice(&rgb);
        for y in r.y0..r.y1 {
            let row = y as usize * stride;
            let span = &mut self.data[row + r.x0 as usize * ch..row + r.x1 as usize * ch];
            for p in span.chunks_exact_mut(ch) {
                p.copy_from_slice(&px[..ch]);
            }
        }
    }

    /// Blend `rgb` over one pixel with coverage `alpha` (0-255); off-image pixels are ignored.
    pub fn blend(&mut self, x: i64, y: i64, rgb: Rgb, alpha: u8) {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return;
        }
        let i = y as usize * self.stride() + x as usize * self.channels;
        let a = u32::from(alpha);
        for (c, &src) in rgb.iter().enumerate() {
            let dst = u32::from(self.data[i + c]);
            self.data[i + c] = ((u32::from(src) * a + dst * (255 - a) + 127) / 255) as u8;
        }
    }
}

/// The pixels under a rectangle, saved before drawing over them so the drawing can be undone
/// without keeping a copy of the whole image.
#[derive(Debug, Clone)]
pub struct Patch {
    rect: IRect,
    pixels: Vec<u8>,
}

impl Raster {
    /// Save the pixels under `rect` (clipped) into `undo`.
    pub fn save(&self, rect: IRect, undo: &mut Vec<Patch>) {
        let Some(r) = rect.clip(self.bounds()) else {
            return;
        };
        let (ch, stride) = (self.channels, self.stride());
        let mut pixels = Vec::with_capacity((r.width() * r.height()) as usize * ch);
        for y in r.y0..r.y1 {
            let row = y as usize * stride;
            pixels
                .extend_from_slice(&self.data[row + r.x0 as usize * ch..row + r.x1 as usize * ch]);
        }
        undo.push(Patch { rect: r, pixels });
    }

    /// Put saved pixels back, newest first (patches may overlap).
    pub fn restore(&mut self, undo: &[Patch]) {
        let (ch, stride) = (self.channels, self.stride());
        for p in undo.iter().rev() {
            let span = p.rect.width() as usize * ch;
            for (i, y) in (p.rect.y0..p.rect.y1).enumerate() {
                let row = y as usize * stride + p.rect.x0 as usize * ch;
                self.data[row..row + span].copy_from_slice(&p.pixels[i * span..(i + 1) * span]);
            }
        }
    }
}

/// Composite RGBA over white in place (screenshots are opaque; transparent PNGs are rare and
/// white is what a browser would show behind them). Leaves alpha at 255.
pub fn flatten_alpha(data: &mut [u8]) {
    for p in data.chunks_exact_mut(4) {
        let a = u32::from(p[3]);
        if a != 255 {
            for c in &mut p[..3] {
                *c = ((u32::from(*c) * a + 255 * (255 - a) + 127) / 255) as u8;
            }
            p[3] = 255;
        }
    }
}

/// Expand gray (1 channel) or gray+alpha (2 channels) to RGB / RGBA.
pub fn gray_to_color(data: &[u8], gray_channels: usize) -> Vec<u8> {
    let out_ch = gray_channels + 2;
    let mut out = Vec::with_capacity(data.len() / gray_channels * out_ch);
    for p in data.chunks_exact(gray_channels) {
        out.extend_from_slice(&[p[0], p[0], p[0]]);
        if gray_channels == 2 {
            out.push(p[1]);
        }
    }
    out
}

/// An RGB raster whose every pixel is `rgb(x, y)`: test pictures.
#[cfg(test)]
pub fn painted(w: u32, h: u32, rgb: impl Fn(u32, u32) -> Rgb) -> Raster {
    let mut data = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            data.extend_from_slice(&rgb(x, y));
        }
    }
    Raster::new(w, h, 3, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_clipped() {
        let mut r = Raster::filled(4, 4, 3, [255, 255, 255]);
        r.fill_rect(IRect::new(-5, 2, 2, 99), [0, 0, 0]);
        assert_eq!(r.pixel(0, 3), [0, 0, 0]);
        assert_eq!(r.pixel(1, 2), [0, 0, 0]);
        assert_eq!(r.pixel(2, 2), [255, 255, 255]);
        assert_eq!(r.pixel(0, 1), [255, 255, 255]);
    }

    #[test]
    fn save_and_restore_undo_drawing() {
        let mut r = Raster::new(5, 4, 3, (0..60).collect());
        let before = r.clone();
        let mut undo = Vec::new();
        for rect in [IRect::new(1, 1, 4, 3), IRect::new(-2, 2, 2, 9)] {
            r.save(rect, &mut undo);
            r.fill_rect(rect, [255, 0, 0]);
        }
        assert_ne!(r, before);
        r.restore(&undo);
        assert_eq!(r, before);
    }

    #[test]
    fn flatten_over_white() {
        let mut px = vec![0, 0, 0, 0, 10, 20, 30, 255];
        flatten_alpha(&mut px);
        assert_eq!(px, vec![255, 255, 255, 255, 10, 20, 30, 255]);
    }
}
