//! The surfaces models see, over the drivers of `hands-core`: today Claude's computer toolset
//! `computer_toolset_20260801` and its legacy shapes `computer_20251124` / `computer_20250124`.
//!
//! A surface turns a model's wire block into a validated action (a type that cannot hold an
//! invalid coordinate, count or key), runs it on a [`hands_core::Desktop`], and answers in the
//! wire's exact shape. It knows no sockets and nothing of how a driver works.
//!
//! ```no_run
//! # async fn demo(desktop: impl hands_core::Desktop) {
//! use hands_toolset::computer::{ComputerConfig, ComputerToolset};
//! use hands_toolset::wire::{ToolUse, user_message};
//!
//! let mut toolset = ComputerToolset::new(desktop, ComputerConfig::default()).unwrap();
//! let turn = serde_json::json!([{"type": "tool_use", "id": "toolu_1", "name": "left_click",
//!     "toolset_name": "computer", "input": {"coordinate": [512, 300]}}]);
//! let blocks = ToolUse::from_message(&turn).unwrap();
//! let outcome = toolset.run_turn(&blocks, &Default::default()).await;
//! println!("{}", user_message(&outcome.results));
//! # }
//! ```

pub mod computer;
pub mod computer_call;
pub mod strings;
pub mod wire;
