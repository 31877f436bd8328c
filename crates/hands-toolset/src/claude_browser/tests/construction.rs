//! Construction and routing.

use super::*;

#[test]
fn a_toolset_that_could_not_answer_is_refused() {
    let log = Log::default();
    let build = |config: ClaudeBrowserConfig| {
        ClaudeBrowserToolset::new(FakeBrowser::new(&log), config).map(|_| ())
    };
    assert_eq!(
        build(ClaudeBrowserConfig::default()),
        Err(ConfigError::MissingUrlPolicy(Member::Navigate))
    );
    assert_eq!(
        build(ClaudeBrowserConfig {
            url_policy: Some(recording_policy(&log)),
            ..ClaudeBrowserConfig::default()
        }),
        Err(ConfigError::MissingConfirm(Member::Navigate))
    );
    assert_eq!(
        build(ClaudeBrowserConfig {
            focused_input: FocusedInput::Refused,
            ..config(&log)
        }),
        Err(ConfigError::FocusedInput(Member::Type))
    );
    assert_eq!(
        build(ClaudeBrowserConfig {
            max_wait: Duration::from_secs(31),
            ..config(&log)
        }),
        Err(ConfigError::Limit {
            field: "max_wait",
            expected: "at most 30 s (the API's longest wait)"
        })
    );
    assert_eq!(
        build(ClaudeBrowserConfig {
            script_timeout: Duration::from_secs(31),
            ..config(&log)
        }),
        Err(ConfigError::Limit {
            field: "script_timeout",
            expected: "from 1 ms to 30 s"
        })
    );
    assert!(matches!(
        build(ClaudeBrowserConfig {
            declaration: BrowserToolsetDeclaration::new().defer_loading(true).member(
                Member::Zoom,
                crate::computer::declaration::MemberConfig {
                    enabled: true,
                    defer_loading: false
                }
            ),
            ..config(&log)
        }),
        Err(ConfigError::Declaration(
            declaration::DeclarationError::MixedDeferLoading
        ))
    ));
    // Reads only: no callbacks needed.
    let reads = BrowserToolsetDeclaration::new();
    let reads = Member::ALL
        .into_iter()
        .filter(|m| m.consent() != Consent::None)
        .fold(reads, BrowserToolsetDeclaration::disable);
    assert!(
        build(ClaudeBrowserConfig {
            declaration: reads,
            ..ClaudeBrowserConfig::default()
        })
        .is_ok()
    );
    // A member none of whose driver calls exist.
    let mut fake = FakeBrowser::new(&log);
    let mut implemented = MemberSet::all();
    implemented.remove(BrowserMember::Zoom);
    fake.implemented = implemented;
    assert!(matches!(
        ClaudeBrowserToolset::new(fake, config(&log)),
        Err(ConfigError::Unimplemented(Member::Zoom))
    ));
    // `file_upload` needs both of its calls: a driver without grants cannot upload.
    let mut fake = FakeBrowser::new(&log);
    let mut implemented = MemberSet::all();
    implemented.remove(BrowserMember::UploadFile);
    fake.implemented = implemented;
    assert!(matches!(
        ClaudeBrowserToolset::new(fake, config(&log)),
        Err(ConfigError::Unimplemented(Member::FileUpload))
    ));
}

#[test]
fn routing_is_on_the_toolset_name() {
    let log = Log::default();
    let toolset = toolset(&log);
    assert!(toolset.owns(&block("toolu_1", "navigate", json!({}))));
    let custom = ToolUse {
        id: "toolu_2".into(),
        name: "navigate".into(),
        toolset_name: None,
        input: json!({}),
    };
    assert!(!toolset.owns(&custom));
    let computer = ToolUse {
        toolset_name: Some("computer".into()),
        ..custom
    };
    assert!(!toolset.owns(&computer));
    let declaration = toolset.declaration();
    assert_eq!(declaration["type"], "browser_toolset_20260801");
    assert_eq!(
        declaration["configs"]["javascript_exec"],
        json!({"enabled": true})
    );
}
