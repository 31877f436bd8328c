//! The agent loop of hands (being written): approvals of computer actions, diagnostics and usage
//! totals, typed ordinary functions, and the context management of long computer-use runs —
//! screenshot history pruning in cache-friendly batches and prompt-cache breakpoints.

pub mod approval;
pub mod context;
pub mod diagnostics;
pub mod functions;
