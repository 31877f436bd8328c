//! The one action layer every surface is a codec over: typed calls in, typed outcomes out.
//!
//! - The desktop: [`desktop::DesktopAction`], run by [`desktop::DesktopActor`] — Claude's
//!   computer toolset and its legacy shapes ([`crate::computer`]), OpenAI's `computer_call`
//!   ([`crate::computer_call`]), `hands mcp`'s desktop tools and the Python package's `Desktop`
//!   parse into it and present its [`desktop::DesktopOutcome`].
//! - The browser: [`BrowserCall`] (hands-core's driver vocabulary), run by [`dispatch`] —
//!   the function-tool browser toolset ([`crate::browser`]), Claude's browser toolset
//!   ([`crate::claude_browser`]), `hands mcp`'s browser tools and the Python package's
//!   `Browser` parse into it and present its [`hands_core::browser::BrowserOutput`].
//!
//! An approver is shown the parsed action, once, before it runs; nothing is parsed again to run
//! it. A wire name never reaches this layer.
//!
//! Spec: claude-computer-use-tool, "Acciones disponibles"; openai-browser-desktop-drivers,
//! "Contrato del controlador de computadora", "Contrato del controlador de navegador".

pub mod desktop;
pub(crate) mod screen;

pub use desktop::{
    ButtonState, DesktopAction, DesktopActor, DesktopOutcome, EffectClass, Quiet, ScreenConfig,
    Wheel,
};
pub use hands_core::browser::BrowserCall;
pub use hands_core::browser::driver::dispatch;
