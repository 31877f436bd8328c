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

/// A sign-in page that keeps its session token in IndexedDB only: its first inline script reads
/// it (so a restore that came after the page's own open would fail), the form writes it with
/// values of many structured-clone types beside.
const IDB_PAGE: &str = r#"<!doctype html><title>Loading</title><p id=out></p>
<form id=f><input id=user><input id=pw type=password><button>Sign in</button></form>
<script>
const open = indexedDB.open('auth', 3);
open.onupgradeneeded = () => {
  const db = open.result;
  const s = db.createObjectStore('session', { keyPath: 'id' });
  s.createIndex('by_user', 'user', { unique: true });
  s.createIndex('by_tag', 'tags', { multiEntry: true });
  db.createObjectStore('events', { autoIncrement: true });
};
open.onsuccess = () => {
  const db = open.result;
  window.db = db;
  db.transaction('session').objectStore('session').get('token').onsuccess = (e) => {
    const row = e.target.result;
    if (row) {
      document.getElementById('f').remove();
      document.title = 'Signed in';
      document.getElementById('out').textContent = 'Welcome back, ' + row.user;
    } else {
      document.title = 'Sign in';
    }
  };
};
document.getElementById('f').onsubmit = async (e) => {
  e.preventDefault();
  if (document.getElementById('pw').value !== 'hunter22') return;
  const token = await (await fetch('/login', { method: 'POST' })).text();
  const row = { id: 'token', token, user: document.getElementById('user').value,
    tags: ['a', 'b'], when: new Date(1700000000000), map: new Map([['k', [1, 2]]]),
    set: new Set(['x']), bytes: new Uint8Array([1, 2, 255]), big: 12345678901234567890n,
    neg: -0, nan: NaN, inf: -Infinity, undef: undefined, re: /a+b/gi,
    blob: new Blob(['blob text'], { type: 'text/plain' }), boxed: new String('s') };
  row.self = row;
  const tx = db.transaction(['session', 'events'], 'readwrite');
  tx.objectStore('session').put(row);
  tx.objectStore('events').put('first');
  tx.objectStore('events').put({ at: new Date(5) }, [new Date(7), 'k']);
  tx.oncomplete = () => { document.title = 'Just signed in'; };
};
</script>"#;

const IDB_OTHER_PAGE: &str = r#"<!doctype html><title>Other</title><script>
const o = indexedDB.open('tracker', 1);
o.onupgradeneeded = () => o.result.createObjectStore('t').put('secret', 1);
o.onsuccess = () => { document.title = 'Tracked'; };
</script>"#;

/// Waits until the page's title is one of `titles`; the title.
async fn title_in(browser: &hands_cdp::CdpBrowser, titles: &[&str]) -> String {
    let expr = format!(
        "new Promise((done) => {{ const t = setInterval(() => {{ \
         if ({titles:?}.includes(document.title)) {{ clearInterval(t); done(document.title); }} \
         }}, 10); }})"
    );
    eval(browser, &expr).await.as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexed_db_signs_the_next_run_in_with_its_types_and_keeps_to_its_origins() {
    let app = Server::start().await;
    app.html("/", IDB_PAGE);
    app.route(
        "/login",
        Route::Body {
            content_type: "text/plain",
            body: b"idb-token-77".to_vec(),
            headers: vec![],
        },
    );
    let other = Server::start().await;
    other.html("/", IDB_OTHER_PAGE);
    let other_origin = format!("http://localhost:{}", other.port);
    let other_url = PageUrl::parse("url", &format!("{other_origin}/")).unwrap();
    let allowed = StateOrigins::new(&[url::Url::parse(&app.url("/")).unwrap()]).unwrap();
    let c = cancel();

    // Run 1: the other origin keeps a database; the person signs in on the app.
    let state = {
        let mut browser = launch(config()).await;
        browser.navigate(&other_url, None, &c).await.unwrap();
        assert_eq!(title_in(&browser, &["Tracked"]).await, "Tracked");
        browser
            .navigate(&app.page_url("/"), None, &c)
            .await
            .unwrap();
        assert_eq!(title_in(&browser, &["Sign in"]).await, "Sign in");
        eval(
            &browser,
            "document.getElementById('user').value = 'ada'; \
             document.getElementById('pw').value = 'hunter22'; \
             document.getElementById('f').requestSubmit(); 1",
        )
        .await;
        assert_eq!(
            title_in(&browser, &["Just signed in"]).await,
            "Just signed in"
        );
        // The other tab's database is still there, in the browser: only the filter leaves it.
        browser.new_tab(Some(&other_url), &c).await.unwrap();
        assert_eq!(title_in(&browser, &["Tracked"]).await, "Tracked");
        browser.save_storage_state(&allowed, None).await.unwrap()
    };
    assert_eq!(state.indexed_db.len(), 1, "{:?}", state.indexed_db);
    let saved = &state.indexed_db[0];
    assert_eq!(saved.origin, app.origin());
    assert_eq!(saved.databases.len(), 1);
    let db = &saved.databases[0];
    assert_eq!((db.name.as_str(), db.version), ("auth", 3));
    let session = db.stores.iter().find(|s| s.name == "session").unwrap();
    assert_eq!(session.key_path, serde_json::json!("id"));
    assert_eq!(session.indexes.len(), 2);
    assert_eq!(session.records.len(), 1);
    let events = db.stores.iter().find(|s| s.name == "events").unwrap();
    assert!(events.auto_increment && events.key_path.is_null());
    assert_eq!(events.records.len(), 2);
    // Sealed, the token is not readable.
    let sealed = state_file::seal(&state, &key(), KdfParams::default()).unwrap();
    assert!(!String::from_utf8_lossy(&sealed).contains("idb-token-77"));
    let mut planted = state_file::open(&sealed, &key()).unwrap();
    let mut foreign = saved.clone();
    foreign.origin = other_origin.clone();
    foreign.databases[0].name = "tracker".into();
    planted.indexed_db.push(foreign);

    // Run 2: signed in from the page's first script, with no password field and no login.
    let mut browser = launch(config()).await;
    let loaded = browser
        .load_storage_state(&planted, &allowed, None)
        .await
        .unwrap();
    assert_eq!((loaded.databases, loaded.refused), (1, 1), "{loaded:?}");
    app.hits_clear();
    browser
        .navigate(&app.page_url("/"), None, &c)
        .await
        .unwrap();
    assert_eq!(
        title_in(&browser, &["Signed in", "Sign in"]).await,
        "Signed in"
    );
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
    // Every type came back as it was.
    let check = r#"new Promise((done) => {
      const tx = db.transaction(['session', 'events'], 'readwrite');
      const s = tx.objectStore('session');
      let blob;
      s.get('token').onsuccess = (e) => {
        const r = e.target.result;
        const out = {
          token: r.token === 'idb-token-77',
          self: r.self === r,
          date: r.when instanceof Date && r.when.getTime() === 1700000000000,
          map: r.map instanceof Map && r.map.get('k')[1] === 2,
          set: r.set instanceof Set && r.set.has('x'),
          bytes: r.bytes instanceof Uint8Array && r.bytes[2] === 255 && r.bytes.length === 3,
          big: r.big === 12345678901234567890n,
          neg: Object.is(r.neg, -0), nan: Number.isNaN(r.nan), inf: r.inf === -Infinity,
          undef: 'undef' in r && r.undef === undefined,
          re: r.re instanceof RegExp && r.re.source === 'a+b' && r.re.flags === 'gi',
          blob: r.blob instanceof Blob && r.blob.type === 'text/plain',
          boxed: r.boxed instanceof String && r.boxed.valueOf() === 's',
          indexes: Array.from(s.indexNames).join(),
          unique: s.index('by_user').unique && s.index('by_tag').multiEntry,
        };
        s.index('by_tag').count('b').onsuccess = (e) => { out.multi = e.target.result; };
        const ev = tx.objectStore('events');
        ev.get([new Date(7), 'k']).onsuccess = (e) => {
          out.arrayKey = e.target.result.at.getTime() === 5;
        };
        ev.put('next').onsuccess = (e) => { out.nextKey = e.target.result; };
        blob = r.blob;
        tx.oncomplete = async () => {
          out.blobText = (await blob.text()) === 'blob text';
          done(out);
        };
      };
    })"#;
    let out = eval(&browser, check).await;
    for (name, value) in out.as_object().unwrap() {
        match name.as_str() {
            "indexes" => assert_eq!(value, "by_tag,by_user"),
            "multi" => assert_eq!(value, 1),
            "nextKey" => assert_eq!(value, 2, "the key generator goes on"),
            _ => assert_eq!(value, true, "{name}: {out}"),
        }
    }
    // The other origin got nothing.
    browser.navigate(&other_url, None, &c).await.unwrap();
    let names = eval(
        &browser,
        "indexedDB.databases().then((d) => d.map((x) => x.name).join())",
    )
    .await;
    assert_eq!(names, "tracker", "only the page's own new database");
    let kept = eval(
        &browser,
        "new Promise((done) => { const o = indexedDB.open('tracker'); o.onsuccess = () => \
         o.result.transaction('t').objectStore('t').get(1).onsuccess = (e) => \
         done(String(e.target.result)); })",
    )
    .await;
    assert_eq!(
        kept, "secret",
        "the page's own value, not the planted store"
    );
}
