//! The agent loop of hands (being written): today the context management of long computer-use
//! runs — screenshot history pruning in cache-friendly batches and prompt-cache breakpoints.

pub mod context;
