//! The surfaces models see, over the drivers of `hands-core`: Claude's computer toolset
//! `computer_toolset_20260801` and its legacy shapes `computer_20251124` / `computer_20250124`,
//! the browser toolset of the driver spec as function tools (`browser_click`, …) over any
//! [`hands_core::browser::Browser`] ([`browser`]), and Claude's browser toolset
//! `browser_toolset_20260801` over the same driver ([`claude_browser`]), which shares the
//! function tools' consent table, `confirm` and URL-policy callbacks and tab-state filtering.
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
//!
//! The browser toolset, with the built-in origin allow-list as its URL policy:
//!
//! ```no_run
//! # async fn demo(driver: impl hands_core::browser::Browser) {
//! use std::sync::Arc;
//! use hands_toolset::browser::{
//!     Approval, BrowserToolCall, BrowserToolset, BrowserToolsetConfig, ConfirmContext,
//!     ConfirmFn, OriginAllowList,
//! };
//!
//! let allow = OriginAllowList::new(["https://shop.example", "https://*.shop.example"]).unwrap();
//! assert!(!allow.check_str("https://shop.example.evil.test/").is_allowed());
//! let confirm = ConfirmFn(|context: ConfirmContext, _cancel| async move {
//!     println!("approve {}?", context.to_json());
//!     Ok(Approval::Approve) // ask a person here
//! });
//! let toolset = BrowserToolset::new(driver, BrowserToolsetConfig {
//!     confirm: Some(Arc::new(confirm)),
//!     url_policy: Some(Arc::new(allow)),
//!     ..BrowserToolsetConfig::default()
//! }).unwrap();
//! let tools = toolset.openai_tools(); // send with the request
//! let call = BrowserToolCall::from_text("call_1", "browser_read_page",
//!     r#"{"filter": "interactive", "tab_id": null}"#);
//! let outcome = toolset.run_calls(&[call], &Default::default()).await;
//! println!("{}", outcome.outputs[0].to_openai());
//! # }
//! ```
//!
//! Claude's browser toolset over the same driver, with the same callbacks:
//!
//! ```no_run
//! # async fn demo(driver: impl hands_core::browser::Browser) {
//! use std::sync::Arc;
//! use hands_toolset::browser::{Approval, ConfirmContext, ConfirmFn, OriginAllowList};
//! use hands_toolset::claude_browser::{ClaudeBrowserConfig, ClaudeBrowserToolset, user_message};
//! use hands_toolset::wire::ToolUse;
//!
//! let confirm = ConfirmFn(|_context: ConfirmContext, _cancel| async move {
//!     Ok(Approval::Approve) // ask a person here
//! });
//! let mut toolset = ClaudeBrowserToolset::new(driver, ClaudeBrowserConfig {
//!     confirm: Some(Arc::new(confirm)),
//!     url_policy: Some(Arc::new(OriginAllowList::new(["https://shop.example"]).unwrap())),
//!     ..ClaudeBrowserConfig::default()
//! }).unwrap();
//! let tools = serde_json::json!([toolset.declaration()]); // {"type": "browser_toolset_20260801"}
//! let turn = serde_json::json!([{"type": "tool_use", "id": "toolu_1", "name": "left_click",
//!     "toolset_name": "browser",
//!     "input": {"target": {"type": "ref", "ref": "e12"}}}]);
//! let blocks = ToolUse::from_message(&turn).unwrap();
//! let outcome = toolset.run_turn(&blocks, &Default::default()).await;
//! println!("{}", user_message(&outcome.results)); // "Clicked." and a browser_state block
//! # }
//! ```

pub mod actions;
pub mod browser;
pub mod claude_browser;
pub mod computer;
pub mod computer_call;
pub mod errtext;
pub mod strings;
pub mod wire;
