//! Every exact string of the specs that hands emits or matches, in one place.

/// The `type` of the computer toolset entry.
///
/// Spec: claude-computer-use-tool, "Parámetros de la herramienta".
pub const COMPUTER_TOOLSET_TYPE: &str = "computer_toolset_20260801";

/// The `toolset_name` that marks a block as a computer action, echoed in every result.
///
/// Spec: claude-computer-use-tool, "Acciones por lotes".
pub const COMPUTER_TOOLSET_NAME: &str = "computer";

/// The text of every block after the first failure in a batch.
///
/// Spec: claude-computer-use-tool, "Acciones por lotes": "exactamente este texto".
pub const NOT_EXECUTED: &str = "Not executed: an earlier computer action in this turn failed.";

/// The browser toolset's own halt text (api-contracts A, "Browser use").
pub const BROWSER_NOT_EXECUTED: &str = "Not executed: an earlier action in this turn failed.";

/// The acknowledgement of a plain action.
///
/// Spec: claude-computer-use-tool, "Cómo funciona el uso de computadora": "un texto breve como OK".
pub const OK: &str = "OK";

/// The legacy tool types and their beta headers.
///
/// Spec: claude-computer-use-tool, "Versiones anteriores de la herramienta".
pub const LEGACY_20251124_TYPE: &str = "computer_20251124";
/// Beta header of `computer_20251124`.
pub const LEGACY_20251124_BETA: &str = "computer-use-2025-11-24";
/// The older legacy tool type.
pub const LEGACY_20250124_TYPE: &str = "computer_20250124";
/// Beta header of `computer_20250124`.
pub const LEGACY_20250124_BETA: &str = "computer-use-2025-01-24";
/// The fixed tool name of both legacy shapes.
pub const LEGACY_TOOL_NAME: &str = "computer";

/// The `cursor_position` answer, e.g. `X=512, Y=384`.
///
/// Spec: claude-computer-use-tool, "Acciones de ejemplo".
pub fn cursor_position_text(x: u32, y: u32) -> String {
    format!("X={x}, Y={y}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_strings() {
        assert_eq!(
            NOT_EXECUTED,
            "Not executed: an earlier computer action in this turn failed."
        );
        assert_eq!(COMPUTER_TOOLSET_TYPE, "computer_toolset_20260801");
        assert_eq!(COMPUTER_TOOLSET_NAME, "computer");
        assert_eq!(cursor_position_text(512, 384), "X=512, Y=384");
        assert_eq!(OK, "OK");
    }
}
