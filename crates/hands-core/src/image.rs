//! Pixel buffers from a capture, cropping, resizing, and encoding to PNG or JPEG within the API's
//! per-image payload limit.

use std::fmt;

use base64::Engine as _;
use fast_image_resize as fir;

use crate::geometry::{CaptureRect, Size};

/// The API's per-image limit on the base64 text of an image: 5 MB.
///
/// Spec: api-contracts, "image exceeds 5 MB maximum: … > 5242880 bytes" (anchors, complaint 9).
pub const MAX_IMAGE_BASE64_BYTES: usize = 5 * 1024 * 1024;

/// How pixels are laid out in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelFormat {
    /// 4 bytes per pixel: blue, green, red, unused (X11 ZPixmap at depth 24 on little-endian).
    Bgrx,
    /// 4 bytes per pixel: red, green, blue, alpha (ignored).
    Rgbx,
    /// 3 bytes per pixel: red, green, blue.
    Rgb,
}

impl PixelFormat {
    /// Bytes per pixel.
    pub const fn bytes_per_pixel(self) -> usize {
        match self {
            PixelFormat::Bgrx | PixelFormat::Rgbx => 4,
            PixelFormat::Rgb => 3,
        }
    }
}

/// A packed pixel buffer (rows without padding).
#[derive(Clone, PartialEq, Eq)]
pub struct Pixels {
    size: Size,
    format: PixelFormat,
    data: Vec<u8>,
}

impl fmt::Debug for Pixels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pixels")
            .field("size", &self.size)
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

/// Why an image could not be built or encoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// The buffer length does not match the size and format.
    #[error("pixel buffer of {len} bytes does not hold {size} pixels of {format:?}")]
    BadBuffer {
        /// Bytes given.
        len: usize,
        /// Size claimed.
        size: Size,
        /// Format claimed.
        format: PixelFormat,
    },
    /// The crop does not lie inside the image.
    #[error("crop {rect:?} is outside the {size} image")]
    CropOutside {
        /// The crop.
        rect: CaptureRect,
        /// The image size.
        size: Size,
    },
    /// The resizer failed.
    #[error("resizing failed: {0}")]
    Resize(String),
    /// The encoder failed.
    #[error("encoding failed: {0}")]
    Encode(String),
    /// Even the smallest attempt stays above the payload limit.
    #[error("the image cannot be made smaller than {limit} bytes of base64 (last try {got} bytes)")]
    TooLarge {
        /// The limit.
        limit: usize,
        /// The smallest size reached.
        got: usize,
    },
}

impl Pixels {
    /// Wraps a packed buffer; an error when its length does not match.
    pub fn new(size: Size, format: PixelFormat, data: Vec<u8>) -> Result<Pixels, ImageError> {
        if data.len() as u64 != size.pixels() * format.bytes_per_pixel() as u64 {
            return Err(ImageError::BadBuffer {
                len: data.len(),
                size,
                format,
            });
        }
        Ok(Pixels { size, format, data })
    }

    /// Width and height.
    pub fn size(&self) -> Size {
        self.size
    }

    /// The layout.
    pub fn format(&self) -> PixelFormat {
        self.format
    }

    /// The raw bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The colour at `(x, y)` as RGB.
    pub fn rgb_at(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.size.width || y >= self.size.height {
            return None;
        }
        let bpp = self.format.bytes_per_pixel();
        let i = (y as usize * self.size.width as usize + x as usize) * bpp;
        let p = &self.data[i..i + bpp];
        Some(match self.format {
            PixelFormat::Bgrx => [p[2], p[1], p[0]],
            PixelFormat::Rgbx | PixelFormat::Rgb => [p[0], p[1], p[2]],
        })
    }

    /// Copies out a rectangle.
    pub fn crop(&self, rect: CaptureRect) -> Result<Pixels, ImageError> {
        let right = u64::from(rect.x) + u64::from(rect.size.width);
        let bottom = u64::from(rect.y) + u64::from(rect.size.height);
        if right > u64::from(self.size.width) || bottom > u64::from(self.size.height) {
            return Err(ImageError::CropOutside {
                rect,
                size: self.size,
            });
        }
        let bpp = self.format.bytes_per_pixel();
        let row_len = self.size.width as usize * bpp;
        let crop_len = rect.size.width as usize * bpp;
        let mut data = Vec::with_capacity(crop_len * rect.size.height as usize);
        for row in rect.y as usize..bottom as usize {
            let start = row * row_len + rect.x as usize * bpp;
            data.extend_from_slice(&self.data[start..start + crop_len]);
        }
        Ok(Pixels {
            size: rect.size,
            format: self.format,
            data,
        })
    }

    /// Resizes to `to` (returns a copy when the size already matches). Four-byte formats are
    /// resized as they are (SIMD), then converted.
    pub fn resize(&self, to: Size) -> Result<Pixels, ImageError> {
        if to == self.size {
            return Ok(self.clone());
        }
        let pixel_type = match self.format {
            PixelFormat::Bgrx | PixelFormat::Rgbx => fir::PixelType::U8x4,
            PixelFormat::Rgb => fir::PixelType::U8x3,
        };
        let src =
            fir::images::ImageRef::new(self.size.width, self.size.height, &self.data, pixel_type)
                .map_err(|e| ImageError::Resize(e.to_string()))?;
        let mut dst = fir::images::Image::new(to.width, to.height, pixel_type);
        // Bilinear convolution averages every source pixel under the destination pixel, so text
        // stays legible when downscaling, at a fraction of Lanczos' cost.
        // The fourth byte is padding (X11 sends it as 0), not alpha: with alpha handling on, the
        // resizer would multiply every colour by it and return a black image.
        let options = fir::ResizeOptions::new()
            .resize_alg(fir::ResizeAlg::Convolution(fir::FilterType::Bilinear))
            .use_alpha(false);
        fir::Resizer::new()
            .resize(&src, &mut dst, &options)
            .map_err(|e| ImageError::Resize(e.to_string()))?;
        Ok(Pixels {
            size: to,
            format: self.format,
            data: dst.into_vec(),
        })
    }

    /// The same pixels as packed RGB.
    pub fn to_rgb(&self) -> Pixels {
        let data = match self.format {
            PixelFormat::Rgb => self.data.clone(),
            PixelFormat::Bgrx => self
                .data
                .chunks_exact(4)
                .flat_map(|p| [p[2], p[1], p[0]])
                .collect(),
            PixelFormat::Rgbx => self
                .data
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect(),
        };
        Pixels {
            size: self.size,
            format: PixelFormat::Rgb,
            data,
        }
    }
}

/// The encoding asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImageFormat {
    /// Lossless PNG (the default: crisp text, exact pixels).
    #[default]
    Png,
    /// JPEG at the given quality (1–100).
    Jpeg {
        /// Quality, 1–100.
        quality: u8,
    },
}

/// The media type of an encoded image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaType {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
}

impl MediaType {
    /// The MIME type.
    pub const fn mime(self) -> &'static str {
        match self {
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
        }
    }
}

/// An encoded image ready for an API: its size, media type and base64 text.
#[derive(Clone, PartialEq, Eq)]
pub struct EncodedImage {
    /// Pixel size of the image as encoded.
    pub size: Size,
    /// PNG or JPEG.
    pub media_type: MediaType,
    /// Standard base64 with padding.
    pub base64: String,
}

impl fmt::Debug for EncodedImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EncodedImage")
            .field("size", &self.size)
            .field("media_type", &self.media_type)
            .field("base64_len", &self.base64.len())
            .finish()
    }
}

impl EncodedImage {
    /// The decoded bytes.
    pub fn bytes(&self) -> Vec<u8> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.base64)
            .unwrap_or_default()
    }

    /// The `data:` URL form used by OpenAI's `image_url`.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type.mime(), self.base64)
    }
}

/// Encodes `pixels` once, in `format`.
pub fn encode(pixels: &Pixels, format: ImageFormat) -> Result<EncodedImage, ImageError> {
    let rgb;
    let rgb_pixels = if pixels.format == PixelFormat::Rgb {
        pixels
    } else {
        rgb = pixels.to_rgb();
        &rgb
    };
    let mut bytes = Vec::with_capacity(rgb_pixels.data.len() / 3);
    let media_type = match format {
        ImageFormat::Png => {
            let mut encoder =
                png::Encoder::new(&mut bytes, rgb_pixels.size.width, rgb_pixels.size.height);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            encoder.set_compression(png::Compression::Fast);
            let mut writer = encoder
                .write_header()
                .map_err(|e| ImageError::Encode(e.to_string()))?;
            writer
                .write_image_data(&rgb_pixels.data)
                .map_err(|e| ImageError::Encode(e.to_string()))?;
            writer
                .finish()
                .map_err(|e| ImageError::Encode(e.to_string()))?;
            MediaType::Png
        }
        ImageFormat::Jpeg { quality } => {
            let width = u16::try_from(rgb_pixels.size.width)
                .map_err(|_| ImageError::Encode("JPEG is limited to 65535 px per side".into()))?;
            let height = u16::try_from(rgb_pixels.size.height)
                .map_err(|_| ImageError::Encode("JPEG is limited to 65535 px per side".into()))?;
            jpeg_encoder::Encoder::new(&mut bytes, quality.clamp(1, 100))
                .encode(
                    &rgb_pixels.data,
                    width,
                    height,
                    jpeg_encoder::ColorType::Rgb,
                )
                .map_err(|e| ImageError::Encode(e.to_string()))?;
            MediaType::Jpeg
        }
    };
    Ok(EncodedImage {
        size: pixels.size,
        media_type,
        base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
    })
}

/// Encodes `pixels` in `format`, and when the base64 text exceeds `limit` bytes, re-encodes as
/// JPEG at falling quality, then downscales by a fifth at a time, until it fits. The returned
/// image's `size` says what the model will see (callers map coordinates with it).
pub fn encode_within(
    pixels: &Pixels,
    format: ImageFormat,
    limit: usize,
) -> Result<EncodedImage, ImageError> {
    let first = encode(pixels, format)?;
    if first.base64.len() <= limit {
        return Ok(first);
    }
    let mut smallest = first.base64.len();
    let mut current = pixels.clone();
    loop {
        for quality in [85, 70, 50, 35] {
            let attempt = encode(&current, ImageFormat::Jpeg { quality })?;
            if attempt.base64.len() <= limit {
                return Ok(attempt);
            }
            smallest = smallest.min(attempt.base64.len());
        }
        let Size { width, height } = current.size;
        if width <= 16 || height <= 16 {
            return Err(ImageError::TooLarge {
                limit,
                got: smallest,
            });
        }
        let smaller = Size {
            width: (width * 4 / 5).max(1),
            height: (height * 4 / 5).max(1),
        };
        current = current.resize(smaller)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(size: Size) -> Pixels {
        // A xorshift stream: incompressible, so PNG is far larger than the limit we set.
        let mut state = 0x2545_f491_u32;
        let data = (0..size.pixels() * 4)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state as u8
            })
            .collect();
        Pixels::new(size, PixelFormat::Bgrx, data).unwrap()
    }

    #[test]
    fn oversized_png_falls_back_to_jpeg_then_downscale() {
        let size = Size::new(400, 300).unwrap();
        let pixels = noise(size);
        let png = encode(&pixels, ImageFormat::Png).unwrap();
        assert!(png.base64.len() > 400_000);
        let limit = 200_000;
        let fitted = encode_within(&pixels, ImageFormat::Png, limit).unwrap();
        assert!(fitted.base64.len() <= limit);
        assert_eq!(fitted.media_type, MediaType::Jpeg);
        let tiny = encode_within(&pixels, ImageFormat::Png, 30_000).unwrap();
        assert!(tiny.base64.len() <= 30_000);
        assert!(tiny.size.width < 400, "had to downscale: {:?}", tiny.size);
    }

    #[test]
    fn crop_copies_exact_pixels() {
        let size = Size::new(8, 4).unwrap();
        let data = (0..32u32)
            .flat_map(|i| [i as u8, 0, 0, 0])
            .collect::<Vec<_>>();
        let pixels = Pixels::new(size, PixelFormat::Bgrx, data).unwrap();
        let crop = pixels
            .crop(CaptureRect {
                x: 2,
                y: 1,
                size: Size::new(3, 2).unwrap(),
            })
            .unwrap();
        assert_eq!(crop.rgb_at(0, 0), Some([0, 0, 10]));
        assert_eq!(crop.rgb_at(2, 1), Some([0, 0, 20]));
        assert!(
            pixels
                .crop(CaptureRect {
                    x: 6,
                    y: 0,
                    size: Size::new(3, 1).unwrap()
                })
                .is_err()
        );
    }

    #[test]
    fn resize_keeps_colours_when_the_padding_byte_is_zero() {
        // X11 captures leave the fourth byte of BGRX at 0; it is not alpha.
        let size = Size::new(8, 8).unwrap();
        let data = [40u8, 80, 120, 0].repeat(64);
        let pixels = Pixels::new(size, PixelFormat::Bgrx, data).unwrap();
        let small = pixels.resize(Size::new(3, 3).unwrap()).unwrap();
        assert_eq!(small.rgb_at(1, 1), Some([120, 80, 40]));
    }

    #[test]
    fn png_round_trips_header() {
        let pixels = noise(Size::new(16, 9).unwrap());
        let png = encode(&pixels, ImageFormat::Png).unwrap();
        let bytes = png.bytes();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 16);
        assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 9);
    }
}
