//! Image sniffing: the format from the magic bytes and the size from the header (PNG, JPEG, GIF,
//! WebP), enough to check what the real APIs check without decoding pixels.

/// An image format the APIs accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// `image/png`
    Png,
    /// `image/jpeg`
    Jpeg,
    /// `image/gif`
    Gif,
    /// `image/webp`
    Webp,
}

impl ImageFormat {
    /// The media type naming this format.
    pub fn media_type(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Gif => "image/gif",
            ImageFormat::Webp => "image/webp",
        }
    }

    /// The format a media type names, if it is one of the four accepted.
    pub fn from_media_type(media_type: &str) -> Option<ImageFormat> {
        [
            ImageFormat::Png,
            ImageFormat::Jpeg,
            ImageFormat::Gif,
            ImageFormat::Webp,
        ]
        .into_iter()
        .find(|f| f.media_type() == media_type)
    }

    /// The format the magic bytes say.
    pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
        if bytes.starts_with(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]) {
            Some(ImageFormat::Png)
        } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
            Some(ImageFormat::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(ImageFormat::Gif)
        } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(ImageFormat::Webp)
        } else {
            None
        }
    }
}

/// What the header of an image says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageInfo {
    /// The format from the magic bytes.
    pub format: ImageFormat,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl ImageInfo {
    /// The longer side.
    pub fn long_edge(&self) -> u32 {
        self.width.max(self.height)
    }

    /// Claude's visual tokens of the high-resolution tier: `⌈w/28⌉·⌈h/28⌉`.
    ///
    /// Spec: claude-computer-use-tool, "Dimensiona las capturas de pantalla…".
    pub fn visual_tokens(&self) -> u64 {
        u64::from(self.width.div_ceil(28)) * u64::from(self.height.div_ceil(28))
    }
}

/// Why an image's header could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImageProblem {
    /// The bytes are none of PNG, JPEG, GIF or WebP.
    #[error("unknown image format")]
    UnknownFormat,
    /// The format is known but the header ends or lies before the size.
    #[error("image header truncated or malformed")]
    Malformed,
}

/// Reads format and size from an image's header.
pub fn inspect(bytes: &[u8]) -> Result<ImageInfo, ImageProblem> {
    let format = ImageFormat::sniff(bytes).ok_or(ImageProblem::UnknownFormat)?;
    let (width, height) = match format {
        ImageFormat::Png => png_size(bytes),
        ImageFormat::Jpeg => jpeg_size(bytes),
        ImageFormat::Gif => gif_size(bytes),
        ImageFormat::Webp => webp_size(bytes),
    }
    .ok_or(ImageProblem::Malformed)?;
    if width == 0 || height == 0 {
        return Err(ImageProblem::Malformed);
    }
    Ok(ImageInfo {
        format,
        width,
        height,
    })
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
}

fn gif_size(b: &[u8]) -> Option<(u32, u32)> {
    Some((u32::from(le16(b, 6)?), u32::from(le16(b, 8)?)))
}

fn png_size(b: &[u8]) -> Option<(u32, u32)> {
    // The first chunk must be IHDR: length, "IHDR", width, height.
    if b.get(12..16)? != b"IHDR" {
        return None;
    }
    Some((be32(b, 16)?, be32(b, 20)?))
}

fn jpeg_size(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    loop {
        // Markers may be preceded by any number of 0xFF fill bytes.
        if *b.get(i)? != 0xff {
            return None;
        }
        while *b.get(i)? == 0xff {
            i += 1;
        }
        let marker = *b.get(i)?;
        i += 1;
        match marker {
            // Standalone markers carry no length.
            0x01 | 0xd0..=0xd7 => continue,
            // Start of scan or end of image before any frame header.
            0xd9 | 0xda => return None,
            // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                let height = be16(b, i + 3)?;
                let width = be16(b, i + 5)?;
                return Some((u32::from(width), u32::from(height)));
            }
            _ => {
                let len = usize::from(be16(b, i)?);
                if len < 2 {
                    return None;
                }
                i += len;
            }
        }
    }
}

fn webp_size(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        b"VP8 " => {
            // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height.
            if b.get(23..26)? != [0x9d, 0x01, 0x2a] {
                return None;
            }
            Some((
                u32::from(le16(b, 26)? & 0x3fff),
                u32::from(le16(b, 28)? & 0x3fff),
            ))
        }
        b"VP8L" => {
            if *b.get(20)? != 0x2f {
                return None;
            }
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Some((le24(b, 24)? + 1, le24(b, 27)? + 1)),
        _ => None,
    }
}

/// What reading one base64 image gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ImageRead {
    /// Whether the text was valid base64.
    pub(crate) decoded: bool,
    /// Decoded size in bytes.
    pub(crate) n_bytes: usize,
    /// The format the magic bytes say.
    pub(crate) format: Option<ImageFormat>,
    /// The header, when it could be read.
    pub(crate) info: Option<ImageInfo>,
}

/// Remembers what each base64 image decoded to, keyed by a fingerprint of its data: a
/// conversation resends the same screenshots every turn, and decoding megabytes of base64
/// per request would make long test runs slow.
#[derive(Debug, Default)]
pub(crate) struct ImageMemo {
    reads: std::collections::HashMap<u64, ImageRead>,
}

/// Most remembered images; the memo starts over beyond this.
const MEMO_CAPACITY: usize = 4096;

impl ImageMemo {
    /// Decodes `data` (standard base64) and reads its header, or recalls the earlier read.
    pub(crate) fn read(&mut self, data: &str) -> ImageRead {
        use base64::Engine as _;
        let key = crate::sign::fingerprint(11, data.as_bytes());
        if let Some(read) = self.reads.get(&key) {
            return *read;
        }
        let read = match base64::engine::general_purpose::STANDARD.decode(data) {
            Ok(bytes) => ImageRead {
                decoded: true,
                n_bytes: bytes.len(),
                format: ImageFormat::sniff(&bytes),
                info: inspect(&bytes).ok(),
            },
            Err(_) => ImageRead {
                decoded: false,
                n_bytes: 0,
                format: None,
                info: None,
            },
        };
        if self.reads.len() >= MEMO_CAPACITY {
            self.reads.clear();
        }
        self.reads.insert(key, read);
        read
    }
}

/// Minimal image headers for tests: enough for [`inspect`], no pixel data.
#[doc(hidden)]
pub mod fixtures {
    /// A PNG signature and IHDR chunk of the given size (CRC not computed).
    pub fn png(width: u32, height: u32) -> Vec<u8> {
        let mut b = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
        b.extend_from_slice(&13u32.to_be_bytes());
        b.extend_from_slice(b"IHDR");
        b.extend_from_slice(&width.to_be_bytes());
        b.extend_from_slice(&height.to_be_bytes());
        b.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
        b
    }

    /// A JPEG with an APP0 segment and a baseline frame header of the given size.
    pub fn jpeg(width: u16, height: u16) -> Vec<u8> {
        let mut b = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10];
        b.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
        b.extend_from_slice(&[0xff, 0xc0, 0x00, 0x11, 0x08]);
        b.extend_from_slice(&height.to_be_bytes());
        b.extend_from_slice(&width.to_be_bytes());
        b.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
        b.extend_from_slice(&[0xff, 0xd9]);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bytes: &[u8], expect: Result<(ImageFormat, u32, u32), ImageProblem>) {
        let got = inspect(bytes).map(|i| (i.format, i.width, i.height));
        assert_eq!(got, expect);
    }

    #[test]
    fn headers() {
        use ImageFormat::*;
        check(&fixtures::png(1280, 800), Ok((Png, 1280, 800)));
        check(&fixtures::jpeg(1024, 768), Ok((Jpeg, 1024, 768)));
        check(b"GIF89a\x40\x01\xc8\x00rest", Ok((Gif, 320, 200)));
        let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        vp8x.extend_from_slice(&[0xff, 0x04, 0x00, 0x1f, 0x03, 0x00]); // 1280 x 800
        check(&vp8x, Ok((Webp, 1280, 800)));
        let mut vp8 = b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0".to_vec();
        vp8.extend_from_slice(&[0, 0, 0, 0x9d, 0x01, 0x2a, 0x00, 0x05, 0x20, 0x03]);
        check(&vp8, Ok((Webp, 1280, 800)));
        let mut vp8l = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f".to_vec();
        let bits: u32 = (1280 - 1) | ((800 - 1) << 14);
        vp8l.extend_from_slice(&bits.to_le_bytes());
        check(&vp8l, Ok((Webp, 1280, 800)));
        check(b"not an image", Err(ImageProblem::UnknownFormat));
        check(&fixtures::png(10, 10)[..20], Err(ImageProblem::Malformed));
        check(&fixtures::png(0, 10), Err(ImageProblem::Malformed));
        check(
            &[0xff, 0xd8, 0xff, 0xda, 0, 2],
            Err(ImageProblem::Malformed),
        );
    }

    #[test]
    fn real_png_from_the_encoder() {
        let mut out = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut out, 3, 2);
            encoder.set_color(png::ColorType::Rgb);
            let mut writer = encoder.write_header().expect("header");
            writer.write_image_data(&[0u8; 18]).expect("data");
        }
        check(&out, Ok((ImageFormat::Png, 3, 2)));
    }

    #[test]
    fn visual_tokens_of_the_high_resolution_tier() {
        let info = ImageInfo {
            format: ImageFormat::Png,
            width: 1280,
            height: 800,
        };
        assert_eq!(info.visual_tokens(), 46 * 29);
        assert_eq!(info.long_edge(), 1280);
    }

    #[test]
    fn media_types() {
        assert_eq!(
            ImageFormat::from_media_type("image/webp"),
            Some(ImageFormat::Webp)
        );
        assert_eq!(ImageFormat::from_media_type("image/bmp"), None);
    }
}
