//! Output sizing and the CSS px -> output px mapping of boxes and masks.

/// Half-open integer rectangle [x0, x1) x [y0, y1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IRect {
    pub x0: i64,
    pub y0: i64,
    pub x1: i64,
    pub y1: i64,
}

impl IRect {
    pub fn new(x0: i64, y0: i64, x1: i64, y1: i64) -> Self {
        IRect { x0, y0, x1, y1 }
    }

    pub fn width(&self) -> i64 {
        self.x1 - self.x0
    }

    pub fn height(&self) -> i64 {
        self.y1 - self.y0
    }

    pub fn is_empty(&self) -> bool {
        self.x1 <= self.x0 || self.y1 <= self.y0
    }

    /// The part inside `bounds`, or None if nothing is left.
    pub fn clip(&self, bounds: IRect) -> Option<IRect> {
        let r = IRect::new(
            self.x0.max(bounds.x0),
            self.y0.max(bounds.y0),
            self.x1.min(bounds.x1),
            self.y1.min(bounds.y1),
        );
        (!r.is_empty()).then_some(r)
    }

    pub fn grow(&self, by: i64) -> IRect {
        IRect::new(self.x0 - by, self.y0 - by, self.x1 + by, self.y1 + by)
    }

    pub fn intersects(&self, o: &IRect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
}

/// A rectangle in floating-point pixels, normalised so width and height are >= 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FRect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl FRect {
    /// From x, y, width, height; a negative width or height extends left / up.
    /// Returns None for non-finite input.
    pub fn from_xywh(x: f64, y: f64, w: f64, h: f64) -> Option<FRect> {
        if !(x.is_finite() && y.is_finite() && w.is_finite() && h.is_finite()) {
            return None;
        }
        Some(FRect {
            x0: x.min(x + w),
            y0: y.min(y + h),
            x1: x.max(x + w),
            y1: y.max(y + h),
        })
    }

    /// The smallest integer rectangle covering this one (masks must cover every touched pixel).
    /// Coordinates are clamped far outside any image so the casts cannot overflow.
    pub fn cover(&self) -> IRect {
        const LIM: f64 = 1e9;
        let c = |v: f64| v.clamp(-LIM, LIM);
        IRect::new(
            c(self.x0).floor() as i64,
            c(self.y0).floor() as i64,
            c(self.x1).ceil() as i64,
            c(self.y1).ceil() as i64,
        )
    }

    /// Integer rectangle with rounded edges (for outlines: no bleeding into neighbours).
    pub fn round(&self) -> IRect {
        const LIM: f64 = 1e9;
        let c = |v: f64| v.clamp(-LIM, LIM).round() as i64;
        IRect::new(c(self.x0), c(self.y0), c(self.x1), c(self.y1))
    }
}

/// Output size for a source of `w` x `h`: fit `max_width` and a long edge of `max_long_edge`,
/// keeping the aspect ratio, never upscaling, never below 1 px.
pub fn fit(w: u32, h: u32, max_width: u32, max_long_edge: u32) -> (u32, u32) {
    let (wf, hf) = (f64::from(w), f64::from(h));
    let s = 1f64
        .min(f64::from(max_width) / wf)
        .min(f64::from(max_long_edge) / wf.max(hf));
    if s >= 1.0 {
        return (w, h);
    }
    let ow = ((wf * s).round() as u32).clamp(1, max_width.min(max_long_edge));
    let oh = ((hf * s).round() as u32).clamp(1, max_long_edge);
    (ow, oh)
}

/// Scale `w` x `h` by `f` (< 1), at least 1 px each side.
pub fn scaled(w: u32, h: u32, f: f64) -> (u32, u32) {
    let sw = ((f64::from(w) * f).round() as u32).clamp(1, w);
    let sh = ((f64::from(h) * f).round() as u32).clamp(1, h);
    (sw, sh)
}

/// How CSS pixels map to source pixels: by the CSS size the image covers when known (robust to
/// zoom and rounding), else by the device pixel ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CssGeometry {
    pub device_pixel_ratio: f64,
    pub css_width: Option<f64>,
    pub css_height: Option<f64>,
}

impl CssGeometry {
    /// Source px per CSS px, (x, y). With only one CSS side known, pixels are taken as square.
    pub fn source_scale(&self, src_w: u32, src_h: u32) -> (f64, f64) {
        let from_w = self.css_width.map(|cw| f64::from(src_w) / cw);
        let from_h = self.css_height.map(|ch| f64::from(src_h) / ch);
        match (from_w, from_h) {
            (Some(sx), Some(sy)) => (sx, sy),
            (Some(s), None) | (None, Some(s)) => (s, s),
            (None, None) => (self.device_pixel_ratio, self.device_pixel_ratio),
        }
    }
}

/// CSS px -> pixels of one concrete raster (output, or DCT-scaled decode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mapping {
    pub sx: f64,
    pub sy: f64,
}

impl Mapping {
    /// `src` is the full-resolution source size, `dst` the raster being drawn on.
    pub fn new(css: &CssGeometry, src: (u32, u32), dst: (u32, u32)) -> Mapping {
        let (cx, cy) = css.source_scale(src.0, src.1);
        Mapping {
            sx: cx * f64::from(dst.0) / f64::from(src.0),
            sy: cy * f64::from(dst.1) / f64::from(src.1),
        }
    }

    pub fn rect(&self, x: f64, y: f64, w: f64, h: f64) -> Option<FRect> {
        FRect::from_xywh(x * self.sx, y * self.sy, w * self.sx, h * self.sy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_width_and_long_edge() {
        assert_eq!(fit(2560, 1440, 1280, 1568), (1280, 720));
        assert_eq!(fit(800, 600, 1280, 1568), (800, 600)); // never upscale
        assert_eq!(fit(1280, 16384, 1280, 1568), (123, 1568)); // tall page: long edge cap
        assert_eq!(fit(1, 16384, 1280, 1568), (1, 1568));
        assert_eq!(fit(7680, 1, 1280, 1568), (1280, 1));
    }

    #[test]
    fn mapping_prefers_css_size() {
        let css = CssGeometry {
            device_pixel_ratio: 2.0,
            css_width: None,
            css_height: None,
        };
        let m = Mapping::new(&css, (2560, 1440), (1280, 720));
        assert!((m.sx - 1.0).abs() < 1e-9 && (m.sy - 1.0).abs() < 1e-9);
        // The DPR says 2 but the image really covers 1000 CSS px: trust the CSS size.
        let css = CssGeometry {
            device_pixel_ratio: 2.0,
            css_width: Some(1000.0),
            css_height: Some(500.0),
        };
        let m = Mapping::new(&css, (2000, 1000), (1000, 500));
        assert!((m.sx - 1.0).abs() < 1e-9 && (m.sy - 1.0).abs() < 1e-9);
        let r = m.rect(10.0, 10.0, -5.0, 0.0).unwrap();
        assert_eq!(r.cover(), IRect::new(5, 10, 10, 10));
    }

    #[test]
    fn clipping() {
        let b = IRect::new(0, 0, 100, 50);
        assert_eq!(
            IRect::new(-10, -10, 10, 10).clip(b),
            Some(IRect::new(0, 0, 10, 10))
        );
        assert_eq!(IRect::new(200, 0, 300, 10).clip(b), None);
        assert_eq!(IRect::new(5, 5, 5, 9).clip(b), None); // zero width
        assert!(FRect::from_xywh(f64::NAN, 0.0, 1.0, 1.0).is_none());
        assert_eq!(
            FRect::from_xywh(1e300, 0.0, 1.0, 1.0).unwrap().cover().x0,
            1_000_000_000
        );
    }
}
