//! Sniff the format and read the pixel size from the first bytes, so the size limits are
//! enforced before any decoder allocates a frame buffer.

use crate::error::{CoreError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub format: Format,
    pub width: u32,
    pub height: u32,
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

pub fn sniff(data: &[u8]) -> Result<Format> {
    if data.starts_with(PNG_SIGNATURE) {
        return Ok(Format::Png);
    }
    if data.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(Format::Jpeg);
    }
    let known = if data.starts_with(b"GIF8") {
        Some("GIF")
    } else if data.len() >= 12 && &data[..4] == b"RIFF" && &data[8..12] == b"WEBP" {
        Some("WebP")
    } else if data.starts_with(b"BM") {
        Some("BMP")
    } else if data.starts_with(b"II*\0") || data.starts_with(b"MM\0*") {
        Some("TIFF")
    } else if data.len() >= 12 && &data[4..8] == b"ftyp" {
        Some("AVIF/HEIF")
    } else {
        None
    };
    Err(CoreError::UnknownFormat(match known {
        Some(name) => format!("unsupported image format {name}: only PNG and JPEG are accepted"),
        None => {
            let head: Vec<String> = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
            format!(
                "unknown image format (first bytes {}): only PNG and JPEG are accepted",
                head.join(" ")
            )
        }
    }))
}

pub fn read_header(data: &[u8]) -> Result<Header> {
    let format = sniff(data)?;
    let (width, height) = match format {
        Format::Png => png_size(data)?,
        Format::Jpeg => jpeg_size(data)?,
    };
    Ok(Header {
        format,
        width,
        height,
    })
}

fn be16(b: &[u8]) -> u32 {
    u32::from(b[0]) << 8 | u32::from(b[1])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// PNG: the IHDR chunk must come first (signature, length, "IHDR", width, height).
fn png_size(data: &[u8]) -> Result<(u32, u32)> {
    if data.len() < 24 {
        return Err(CoreError::Corrupt(
            "truncated PNG: no complete IHDR header".into(),
        ));
    }
    if &data[12..16] != b"IHDR" {
        return Err(CoreError::Corrupt(
            "corrupt PNG: first chunk is not IHDR".into(),
        ));
    }
    Ok((be32(&data[16..20]), be32(&data[20..24])))
}

/// One marker segment of a JPEG: its code and payload (after the length), cut short where the
/// data ends. SOS and EOI end the walk and come with an empty payload.
pub struct Segment<'a> {
    pub marker: u8,
    pub payload: &'a [u8],
}

/// The marker segments of a JPEG, from after SOI up to the first SOS or EOI (included).
pub fn jpeg_segments(data: &[u8]) -> JpegSegments<'_> {
    JpegSegments {
        data,
        i: 2,
        done: false,
    }
}

pub struct JpegSegments<'a> {
    data: &'a [u8],
    i: usize,
    done: bool,
}

impl<'a> Iterator for JpegSegments<'a> {
    type Item = Result<Segment<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let data = self.data;
        let truncated = || CoreError::Corrupt("truncated JPEG: no frame header (SOF)".into());
        loop {
            // Markers are 0xFF followed by a code; any number of 0xFF fill bytes may precede it.
            while self.i < data.len() && data[self.i] != 0xFF {
                self.i += 1;
            }
            while self.i < data.len() && data[self.i] == 0xFF {
                self.i += 1;
            }
            let Some(&marker) = data.get(self.i) else {
                self.done = true;
                return Some(Err(truncated()));
            };
            self.i += 1;
            match marker {
                // Standalone markers carry no length.
                0x01 | 0xD0..=0xD8 => continue,
                0xD9 | 0xDA => {
                    self.done = true;
                    return Some(Ok(Segment {
                        marker,
                        payload: &[],
                    }));
                }
                _ => {}
            }
            let i = self.i;
            if i + 2 > data.len() {
                self.done = true;
                return Some(Err(truncated()));
            }
            let len = be16(&data[i..]) as usize;
            if len < 2 {
                self.done = true;
                return Some(Err(CoreError::Corrupt(
                    "corrupt JPEG: bad segment length".into(),
                )));
            }
            self.i += len;
            let payload = &data[i + 2..(i + len).min(data.len())];
            return Some(Ok(Segment { marker, payload }));
        }
    }
}

/// SOFn: a frame header (not DHT, JPG or DAC, which share the range).
pub fn is_frame_header(marker: u8) -> bool {
    matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC)
}

/// JPEG: walk the marker segments up to the first SOFn frame header.
fn jpeg_size(data: &[u8]) -> Result<(u32, u32)> {
    for segment in jpeg_segments(data) {
        let Segment { marker, payload } = segment?;
        if matches!(marker, 0xD9 | 0xDA) {
            return Err(CoreError::Corrupt(
                "corrupt JPEG: image data before any frame header".into(),
            ));
        }
        if is_frame_header(marker) {
            // precision(1) height(2) width(2)
            if payload.len() < 5 {
                return Err(CoreError::Corrupt(
                    "truncated JPEG: no frame header (SOF)".into(),
                ));
            }
            return Ok((be16(&payload[3..]), be16(&payload[1..])));
        }
    }
    Err(CoreError::Corrupt(
        "truncated JPEG: no frame header (SOF)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_header(w: u32, h: u32) -> Vec<u8> {
        let mut v = PNG_SIGNATURE.to_vec();
        v.extend_from_slice(&13u32.to_be_bytes());
        v.extend_from_slice(b"IHDR");
        v.extend_from_slice(&w.to_be_bytes());
        v.extend_from_slice(&h.to_be_bytes());
        v.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
        v
    }

    #[test]
    fn png_dims() {
        let h = read_header(&png_header(40_000, 30)).unwrap();
        assert_eq!((h.format, h.width, h.height), (Format::Png, 40_000, 30));
    }

    #[test]
    fn jpeg_sof_dims_after_app_segments() {
        let mut v = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0xAA, 0xBB];
        v.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x11, 0x08, 0x4E, 0x20, 0x4E, 0x20, 0x03]);
        let h = read_header(&v).unwrap();
        assert_eq!(
            (h.format, h.width, h.height),
            (Format::Jpeg, 20_000, 20_000)
        );
    }

    #[test]
    fn truncated_and_unknown() {
        assert!(matches!(
            read_header(&png_header(1, 1)[..20]),
            Err(CoreError::Corrupt(_))
        ));
        assert!(matches!(
            read_header(&[0xFF, 0xD8, 0xFF]),
            Err(CoreError::Corrupt(_))
        ));
        assert!(matches!(
            read_header(b"GIF89a..."),
            Err(CoreError::UnknownFormat(_))
        ));
        assert!(matches!(
            read_header(b"hello"),
            Err(CoreError::UnknownFormat(_))
        ));
    }
}
