//! `screenshot` (the viewport, in CSS pixels) and `zoom` (a viewport region, bounds-checked, magnified to fit the viewport), captured by `Page.captureScreenshot`.
//!
//! Spec: openai-browser-desktop-drivers, "Devolver imágenes del navegador": "Para zoom, region es
//! [left, top, right, bottom] … El controlador se encarga de recortar la imagen y comprobar los
//! límites. Todas las coordenadas posteriores siguen refiriéndose al área visible completa."

use base64::Engine as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::CssRegion;
use hands_core::browser::{DriverError, TabId};
use hands_core::geometry::Size;
use hands_core::image::{EncodedImage, ImageFormat, MediaType};

use crate::connection::decode;
use crate::driver::{CdpBrowser, Page};
use crate::protocol::{GetLayoutMetrics, Screenshot};

/// The pixel size of a PNG or JPEG, read from its header.
pub fn image_size(bytes: &[u8]) -> Option<Size> {
    if bytes.len() >= 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        let w = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
        let h = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
        return Size::new(w, h);
    }
    if bytes.starts_with(&[0xff, 0xd8]) {
        let mut i = 2;
        while i + 9 < bytes.len() {
            if bytes[i] != 0xff {
                i += 1;
                continue;
            }
            let marker = bytes[i + 1];
            // Start-of-frame markers (not DHT 0xC4, JPG 0xC8, DAC 0xCC) carry the size.
            if matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
                let h = u16::from_be_bytes([bytes[i + 5], bytes[i + 6]]);
                let w = u16::from_be_bytes([bytes[i + 7], bytes[i + 8]]);
                return Size::new(u32::from(w), u32::from(h));
            }
            if matches!(marker, 0xd8 | 0x01 | 0xd0..=0xd7 | 0xff) {
                i += 2;
                continue;
            }
            let len = usize::from(u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]));
            i += 2 + len;
        }
    }
    None
}

/// The zoom factor that fits a `w`x`h` region into the viewport, between 1 and `max`.
pub fn zoom_scale(region: (u64, u64), viewport: (u32, u32), max: f64) -> f64 {
    let (w, h) = (region.0.max(1) as f64, region.1.max(1) as f64);
    let fit = (f64::from(viewport.0) / w).min(f64::from(viewport.1) / h);
    fit.clamp(1.0, max.max(1.0))
}

impl CdpBrowser {
    async fn capture(
        &self,
        page: &Page,
        clip: Option<Value>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        let (format, quality, media_type) = match self.config.image_format {
            ImageFormat::Png => ("png", None, MediaType::Png),
            ImageFormat::Jpeg { quality } => ("jpeg", Some(quality.clamp(1, 100)), MediaType::Jpeg),
        };
        let mut params =
            json!({"format": format, "fromSurface": true, "captureBeyondViewport": false});
        if let Some(q) = quality {
            params["quality"] = json!(q);
        }
        if let Some(clip) = clip {
            params["clip"] = clip;
        }
        let value = self
            .shared
            .conn
            .call_with(
                Some(&page.session),
                "Page.captureScreenshot",
                params,
                self.config.call_timeout,
                Some(cancel),
            )
            .await
            .map_err(|e| self.cdp_error(e))?;
        let shot: Screenshot =
            decode("Page.captureScreenshot", value).map_err(|e| self.cdp_error(e))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&shot.data)
            .map_err(|e| DriverError::Failed(format!("screenshot data: {e}")))?;
        let size = image_size(&bytes)
            .ok_or_else(|| DriverError::Failed("the screenshot is not a PNG or JPEG".into()))?;
        Ok(EncodedImage {
            size,
            media_type,
            base64: shot.data,
        })
    }

    /// `screenshot`: the whole viewport.
    pub(crate) async fn screenshot_impl(
        &mut self,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        let page = self.page_ready(tab).await?;
        self.capture(&page, None, cancel).await
    }

    /// `zoom`: the region, checked against the viewport, magnified to fit it (at most
    /// `max_zoom_scale`).
    pub(crate) async fn zoom_impl(
        &mut self,
        region: CssRegion,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        let page = self.page_ready(tab).await?;
        let [left, top, right, bottom] = region.edges();
        let (vw, vh) = self.config.viewport;
        if right > u64::from(vw) || bottom > u64::from(vh) {
            return Err(DriverError::refused(format!(
                "The region [{left}, {top}, {right}, {bottom}] reaches outside the {vw}x{vh} viewport."
            )));
        }
        // The clip is in document coordinates: add the scroll offset.
        let metrics = self
            .shared
            .conn
            .run(Some(&page.session), &GetLayoutMetrics {})
            .await
            .map_err(|e| self.cdp_error(e))?;
        let viewport = metrics.css_visual_viewport;
        let scale = zoom_scale(
            (right - left, bottom - top),
            (vw, vh),
            self.config.max_zoom_scale,
        );
        let clip = json!({
            "x": viewport.page_x + left as f64,
            "y": viewport.page_y + top as f64,
            "width": (right - left) as f64,
            "height": (bottom - top) as f64,
            "scale": scale,
        });
        self.capture(&page, Some(clip), cancel).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(1280u32.to_be_bytes());
        png.extend(800u32.to_be_bytes());
        assert_eq!(image_size(&png), Size::new(1280, 800));
        // SOI, APP0 of 16 bytes, SOF0 with height 600 and width 1024.
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10];
        jpeg.extend([0u8; 14]);
        jpeg.extend([0xff, 0xc0, 0x00, 0x11, 0x08, 0x02, 0x58, 0x04, 0x00, 0x03]);
        jpeg.extend([0u8; 8]);
        assert_eq!(image_size(&jpeg), Size::new(1024, 600));
        assert_eq!(image_size(b"GIF89a"), None);
    }

    #[test]
    fn zoom_fits_the_viewport_within_bounds() {
        assert_eq!(zoom_scale((320, 200), (1280, 800), 4.0), 4.0);
        assert_eq!(zoom_scale((640, 200), (1280, 800), 4.0), 2.0);
        assert_eq!(zoom_scale((100, 100), (1280, 800), 4.0), 4.0);
        assert_eq!(zoom_scale((1280, 800), (1280, 800), 4.0), 1.0);
        assert_eq!(
            zoom_scale((1000, 790), (1280, 800), 4.0),
            1.0126582278481013
        );
    }
}
