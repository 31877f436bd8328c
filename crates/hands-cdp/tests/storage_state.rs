//! Tier 3: saved sign-ins against real Chromium. Run 1 signs in on a demo page (a sign-in cookie,
//! an HttpOnly session cookie and a localStorage item) and saves the state sealed to a file;
//! run 2, a fresh browser, loads it and is signed in without a password field on the page.
//! An origin outside the allow-list has its own cookie and localStorage: neither is saved, and
//! planted in a file, neither is restored.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use hands_cdp::state_file::{self, KdfParams, SavedCookie, SavedOrigin, StateKey};
use hands_cdp::storage_state::{SEEDED_MARKER, StateOrigins};
use hands_core::browser::Browser;
use hands_core::browser::args::PageUrl;

const SIGN_IN_PAGE: &str = r#"<!doctype html><title>Sign in</title><p id=out></p>
<form id=f><input id=user name=user><input id=pw type=password name=pw><button>Sign in</button></form>
<script>
const f = document.getElementById('f');
if (document.cookie.includes('signed_in=yes') && localStorage.getItem('user')) {
  f.remove();
  document.title = 'Signed in';
  document.getElementById('out').textContent = 'Welcome back, ' + localStorage.getItem('user');
} else {
  f.onsubmit = async (e) => {
    e.preventDefault();
    if (document.getElementById('pw').value !== 'hunter22') return;
    await fetch('/login', { method: 'POST' });
    document.cookie = 'signed_in=yes; max-age=3600; path=/';
    localStorage.setItem('user', document.getElementById('user').value);
    document.title = 'Just signed in';
  };
}
</script>"#;

const OTHER_PAGE: &str = r#"<!doctype html><title>Other</title><script>
if (!location.search.includes('check')) {
  document.cookie = 'tracker=other; max-age=3600; path=/';
  localStorage.setItem('other', 'secret');
}
</script>"#;

fn key() -> StateKey {
    StateKey::new("correct horse battery").unwrap()
}

async fn cookies(browser: &hands_cdp::CdpBrowser) -> Vec<serde_json::Value> {
    let answer = browser
        .connection()
        .call(None, "Storage.getCookies", serde_json::json!({}))
        .await
        .unwrap();
    answer["cookies"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_state_signs_the_next_run_in_and_keeps_to_its_origins() {
    let app = Server::start().await;
    app.html("/", SIGN_IN_PAGE);
    app.route(
        "/login",
        Route::Body {
            content_type: "text/plain",
            body: b"ok".to_vec(),
            headers: vec![(
                "Set-Cookie",
                "sid=opaque-session-42; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax".into(),
            )],
        },
    );
    // Another host (cookies ignore ports, so another port would share the app's cookies).
    let other = Server::start().await;
    other.html("/", OTHER_PAGE);
    let other_origin = format!("http://localhost:{}", other.port);
    let other_url = |q: &str| PageUrl::parse("url", &format!("{other_origin}/{q}")).unwrap();
    let allowed = StateOrigins::new(&[url::Url::parse(&app.url("/")).unwrap()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shop.state");
    let c = cancel();

    // Run 1: the other origin leaves its marks, then the person signs in.
    {
        let mut browser = launch(config()).await;
        browser.navigate(&other_url(""), None, &c).await.unwrap();
        assert_eq!(
            eval(&browser, "localStorage.getItem('other')").await,
            "secret"
        );
        browser
            .navigate(&app.page_url("/"), None, &c)
            .await
            .unwrap();
        assert_eq!(eval(&browser, "document.title").await, "Sign in");
        eval(
            &browser,
            "document.getElementById('user').value = 'ada'; \
             document.getElementById('pw').value = 'hunter22'; \
             document.getElementById('f').requestSubmit(); \
             new Promise(r => setTimeout(r, 300)).then(() => document.title)",
        )
        .await;
        assert_eq!(eval(&browser, "document.title").await, "Just signed in");
        let state = browser.save_storage_state(&allowed, None).await.unwrap();
        let names: Vec<&str> = state.cookies.iter().map(|c| c.name.as_str()).collect();
        assert!(
            names.contains(&"sid") && names.contains(&"signed_in"),
            "{names:?}"
        );
        assert!(!names.contains(&"tracker"), "{names:?}");
        assert!(state.cookies.iter().any(|c| c.name == "sid" && c.http_only));
        assert_eq!(state.origins.len(), 1, "{:?}", state.origins);
        assert_eq!(state.origins[0].origin, app.origin());
        assert_eq!(
            state.origins[0].local_storage,
            vec![("user".to_owned(), "ada".to_owned())]
        );
        // Both origins really had storage: only the filter kept the other out.
        assert!(
            cookies(&browser)
                .await
                .iter()
                .any(|c| c["name"] == "tracker")
        );
        std::fs::write(
            &file,
            state_file::seal(&state, &key(), KdfParams::default()).unwrap(),
        )
        .unwrap();
    }

    // A file that holds the other origin's cookie and storage too (as if planted).
    let mut planted = state_file::open(&std::fs::read(&file).unwrap(), &key()).unwrap();
    planted.cookies.push(SavedCookie {
        name: "tracker".into(),
        value: "planted".into(),
        domain: "localhost".into(),
        path: "/".into(),
        expires: None,
        http_only: false,
        secure: false,
        same_site: None,
    });
    planted.origins.push(SavedOrigin {
        origin: other_origin.clone(),
        local_storage: vec![("other".into(), "planted".into())],
    });
    let wrong = state_file::open(
        &std::fs::read(&file).unwrap(),
        &StateKey::new("not the passphrase").unwrap(),
    );
    assert!(matches!(wrong, Err(state_file::StateFileError::WrongKey)));

    // Run 2: a fresh browser loads the state and is signed in; no password field exists.
    let mut browser = launch(config()).await;
    let loaded = browser
        .load_storage_state(&planted, &allowed, None)
        .await
        .unwrap();
    app.hits_clear();
    browser
        .navigate(&app.page_url("/"), None, &c)
        .await
        .unwrap();
    assert_eq!(eval(&browser, "document.title").await, "Signed in");
    assert_eq!(
        eval(&browser, "document.getElementById('out').textContent").await,
        "Welcome back, ada"
    );
    assert_eq!(
        eval(
            &browser,
            "document.querySelectorAll('input[type=password]').length"
        )
        .await,
        0
    );
    assert!(
        !app.paths().iter().any(|p| p == "/login"),
        "{:?}",
        app.paths()
    );
    assert!(
        cookies(&browser)
            .await
            .iter()
            .any(|c| c["name"] == "sid" && c["value"] == "opaque-session-42")
    );
    // The page signing out stays signed out on its next load in this tab.
    eval(&browser, "localStorage.removeItem('user'); 1").await;
    browser
        .navigate(&app.page_url("/"), None, &c)
        .await
        .unwrap();
    assert_eq!(eval(&browser, "document.title").await, "Sign in");
    assert_eq!(
        eval(
            &browser,
            &format!("sessionStorage.getItem('{SEEDED_MARKER}')")
        )
        .await,
        "1"
    );
    // Nothing of the other origin came back.
    browser
        .navigate(&other_url("?check"), None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "localStorage.getItem('other')").await,
        serde_json::Value::Null
    );
    assert_eq!(eval(&browser, "document.cookie").await, "");
    assert!(
        !cookies(&browser)
            .await
            .iter()
            .any(|c| c["name"] == "tracker")
    );
    // The counts (all a log may say of a load).
    assert_eq!(
        (loaded.cookies, loaded.origins, loaded.refused),
        (2, 1, 2),
        "{loaded:?}"
    );
}
