//! The vocabulary every part of hands shares: pixel spaces and the screenshot sizing that maps
//! between them, mouse and keyboard input, pixel buffers and their encoding, the [`Desktop`]
//! driver trait, and the browser driver contract ([`browser::Browser`], validated member
//! arguments, tab state, structured reads).
//!
//! `hands-core` knows no HTTP, no CDP, no X11 connection and no model API's JSON: surfaces parse
//! wire input into these types, drivers execute them. (The browser contract's own result shapes,
//! `BrowserReadV1` and the file outcome, serialise here because the spec defines them.)
//!
//! ```
//! use hands_core::geometry::{Frame, ImageTier, ScreenshotSizing, Size};
//!
//! // A 1920x1080 screen shown to a model of the standard image tier.
//! let frame = Frame::new(Size::new(1920, 1080).unwrap(), 1.0,
//!     ScreenshotSizing { tier: ImageTier::Standard, max_long_edge: None });
//! assert_eq!(frame.shot(), Size::new(1430, 804).unwrap());
//! // The model clicks at (715, 402) in the screenshot: that is the screen's centre.
//! let p = frame.point(715, 402).unwrap();
//! assert_eq!((frame.to_screen(p).x, frame.to_screen(p).y), (960, 540));
//! ```

pub mod browser;
pub mod desktop;
pub mod geometry;
pub mod image;
pub mod input;
pub mod process;

pub use desktop::{Desktop, DesktopError, ScreenInfo, SettleBudget, SettleReport};
pub use tokio_util::sync::CancellationToken;
