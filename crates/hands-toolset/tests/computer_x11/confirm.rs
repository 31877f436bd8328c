//! Members that need a confirmation (`ComputerConfig::confirm_members`, the SDK's `type`, `key`
//! and `hold_key`): without a runner's approver nobody can confirm, so `run_turn` refuses them
//! before any key reaches the window, and the batch stops there.

use hands_testkit::RecorderConfig;
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{ComputerConfig, confirm_unavailable_text};
use hands_toolset::strings::NOT_EXECUTED;
use serde_json::json;

use crate::support::{Rig, config, keys};

#[tokio::test]
async fn keyboard_members_needing_a_confirmation_never_type_without_one() {
    let mut rig = Rig::with(
        640,
        480,
        ComputerConfig {
            confirm_members: Member::KEYBOARD.to_vec(),
            ..config()
        },
        &RecorderConfig::default(),
    );
    let blocks = vec![
        rig.call("left_click", json!({"coordinate": [10, 10]})),
        rig.call("type", json!({"text": "secret"})),
        rig.call("key", json!({"text": "Return"})),
    ];
    let answers = rig.turn(blocks).await;
    answers[0].assert_ok();
    assert!(answers[1].is_error());
    assert_eq!(answers[1].text(), confirm_unavailable_text(Member::Type));
    assert_eq!(
        answers[1].text(),
        "Permission to run 'type' could not be obtained (the confirmation prompt failed). Do not retry it unless the user asks you to."
    );
    assert_eq!(answers[2].text(), NOT_EXECUTED);
    assert!(keys(&rig.events()).is_empty(), "no key reached the window");
    assert_eq!(rig.typed(), "");
}
