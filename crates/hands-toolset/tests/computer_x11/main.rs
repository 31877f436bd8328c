//! Tier-3 tests of the computer toolset over a real X11 desktop: each test spawns its own Xvfb,
//! starts an [`hands_testkit::InputRecorder`] on it, feeds the toolset `tool_use` blocks as a model
//! would send them, and asserts what the recorder's window received (or what the screen showed),
//! not what the driver says it did.
//!
//! Spec: claude-computer-use-tool, "Acciones disponibles", "Acciones por lotes", "Maneja los
//! errores", "Dimensiona las capturas de pantalla para ajustarse a los límites de imagen".

mod batches;
mod confirm;
mod images;
mod keyboard;
mod pointer;
mod support;
mod waits;
