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

// ---------------------------------------------------------------------------------------------
// The function-tool browser toolset (openai-browser-desktop-drivers). The spec fixes the
// behaviour ("una respuesta de rechazo fija", "un mensaje de fallo genérico", "un error que
// indica que está ocupado") but not the wording: every text below is ours, written for a model
// to act on. Each is answered inside `{"ok": false, "error": …}`.

/// The prefix of every browser tool name: `browser_click`, `browser_read_page`, … (ours; the
/// api-contracts B example calls `browser_click`).
pub const BROWSER_TOOL_PREFIX: &str = "browser_";

/// The fixed answer to a protected read (`confirm_reads`) the person did not approve: no page
/// content and no state go with it. Ours.
///
/// Spec: openai-browser-desktop-drivers, "Aprobar acciones y administrar la sesión": "Si se
/// rechaza la lectura, no se devuelve contenido ni estado de la página."
pub const BROWSER_READ_REFUSED: &str = "Refused: the user did not approve reading this page, so nothing was read. Do not retry the read; continue without it or ask the user.";

/// The answer when `confirm` did not approve an action: it was not performed. Ours.
///
/// Spec: openai-browser-desktop-drivers, "Aprobar acciones y administrar la sesión".
pub const BROWSER_ACTION_DENIED: &str = "Refused: the user did not approve this action, so it was not performed. Choose another step or ask the user.";

/// The answer when the URL policy did not allow a `navigate` or `new_tab` URL. Ours.
///
/// Spec: openai-browser-desktop-drivers, "Restringir las URL".
pub const BROWSER_URL_DENIED: &str = "Refused: this URL is not allowed for this task, so it was not opened. Use a URL on a site the task allows.";

/// The generic failure text for any driver error that is not a `BrowserError` (whose own safe
/// text is shown instead); the detail goes to the logs only. Ours.
///
/// Spec: openai-browser-desktop-drivers, "Manejar fallos": "Otros errores que lance una operación
/// del navegador generan un mensaje de fallo genérico."
pub const BROWSER_FAILED: &str = "The browser operation failed. Read the page again to see its current state before trying another step.";

/// The answer to every browser call of a response after one failed: not executed, so the model
/// chooses again next turn. Ours (Claude's browser toolset has its own, [`BROWSER_NOT_EXECUTED`]).
///
/// Spec: openai-browser-desktop-drivers, "Manejar fallos": "omite las operaciones de navegador
/// restantes de esa respuesta y permite que el modelo vuelva a elegir en el turno siguiente."
pub const BROWSER_CALL_SKIPPED: &str = "Not executed: an earlier browser call in this response failed. Check that result, then choose the next step.";

/// The answer to a call that overlaps another call on the same toolset. Ours.
///
/// Spec: openai-browser-desktop-drivers, "Cerrar y cancelar operaciones": "Si dos llamadas se
/// superponen, el auxiliar rechaza la nueva con un error que indica que está ocupado."
pub const BROWSER_BUSY: &str =
    "Refused: the browser is busy with another call. Wait for that call's result, then call again.";

/// The answer to a call made after `close()`. Ours.
///
/// Spec: openai-browser-desktop-drivers, "Cerrar y cancelar operaciones": "Llama a close() del
/// auxiliar para rechazar nuevas operaciones."
pub const BROWSER_CLOSED: &str =
    "Refused: the browser session is closed and accepts no more calls.";

/// The answer to a call of a browser tool that is not enabled (or does not exist). Ours.
///
/// Spec: openai-browser-desktop-drivers, "Seleccionar métodos": "Rechaza las llamadas
/// deshabilitadas antes de leer el estado o solicitar consentimiento."
pub const BROWSER_NOT_ENABLED: &str =
    "Refused: this browser tool is not enabled. Use only the browser tools listed for this task.";

/// The answer when the driver says it does not implement a selected member. Ours.
pub const BROWSER_UNSUPPORTED: &str =
    "Refused: this browser does not support that operation. Use another browser tool.";

/// The answer to a call stopped because its run was cancelled. Ours.
pub const BROWSER_CANCELLED: &str = "Not executed: the run was cancelled.";

/// The answer to a call after which the browser state could not be read: the run stops, and
/// whether the call took effect is unknown. Ours.
///
/// Spec: openai-browser-desktop-drivers, "Contrato del controlador de navegador": "Si falla una
/// lectura de estado obligatoria, la ejecución se detiene."
pub const BROWSER_STATE_UNAVAILABLE: &str = "The browser state could not be read, so the outcome of this call is unknown. The run stops here.";

/// The answer when `type` has a null target or `key` is called while the toolset only allows
/// input bound to a target. Ours.
///
/// Spec: openai-browser-desktop-drivers, "Aprobar acciones y administrar la sesión": "deshabilita
/// key y rechaza type si el destino es nulo, ya que ambos usan el foco actual."
pub const BROWSER_FOCUS_INPUT_REFUSED: &str = "Refused: typing into whatever has focus is not allowed here. Pass the `target` ref of the field to type into.";

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

    #[test]
    fn browser_strings_are_fixed_and_model_actionable() {
        assert_eq!(BROWSER_TOOL_PREFIX, "browser_");
        // The halt text of Claude's browser toolset is exact (api-contracts A); ours differs.
        assert_eq!(
            BROWSER_NOT_EXECUTED,
            "Not executed: an earlier action in this turn failed."
        );
        let ours = [
            BROWSER_READ_REFUSED,
            BROWSER_ACTION_DENIED,
            BROWSER_URL_DENIED,
            BROWSER_FAILED,
            BROWSER_CALL_SKIPPED,
            BROWSER_BUSY,
            BROWSER_CLOSED,
            BROWSER_NOT_ENABLED,
            BROWSER_UNSUPPORTED,
            BROWSER_CANCELLED,
            BROWSER_STATE_UNAVAILABLE,
            BROWSER_FOCUS_INPUT_REFUSED,
        ];
        for (i, text) in ours.iter().enumerate() {
            assert!(text.is_ascii() && text.ends_with('.'), "{text}");
            assert!(!ours[..i].contains(text), "two answers share {text:?}");
            assert_ne!(*text, BROWSER_NOT_EXECUTED);
        }
        assert!(BROWSER_CALL_SKIPPED.starts_with("Not executed:"));
        assert!(BROWSER_READ_REFUSED.starts_with("Refused:"));
    }
}
