"""Saved sign-ins in the Python package (issue 22): ``Browser.launch(state=NAME)`` keeps a
sign-in across two sessions as ``hands run --state`` does — the same files and key variable —
on a real Chromium and a local sign-in site that keeps its session in a cookie and IndexedDB."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator, List, Tuple

import pytest

import hands.sync
from hands import ArgumentError, StateError

KEY = "correct horse battery staple"
TOKEN = "py-idb-token-5"

PAGE = b"""<!doctype html><title>Vault</title><p id=out>Loading.</p>
<form id=f><label>User <input id=user></label>
<label>Password <input id=pw type=password></label><button>Sign in</button></form>
<script>
const open = indexedDB.open('vault', 1);
open.onupgradeneeded = () => open.result.createObjectStore('session');
open.onsuccess = () => {
  const db = open.result;
  db.transaction('session').objectStore('session').get('me').onsuccess = (e) => {
    const me = e.target.result;
    if (me && me.token && document.cookie.includes('seen=1')) {
      document.getElementById('f').remove();
      document.getElementById('out').textContent = 'Welcome back, ' + me.user;
      return;
    }
    document.getElementById('out').textContent = 'Please sign in.';
    document.getElementById('f').onsubmit = async (e) => {
      e.preventDefault();
      if (document.getElementById('pw').value !== 'hunter22') return;
      const token = await (await fetch('/login', { method: 'POST' })).text();
      document.cookie = 'seen=1; max-age=3600; path=/';
      const tx = db.transaction('session', 'readwrite');
      tx.objectStore('session').put({ user: document.getElementById('user').value, token }, 'me');
      tx.oncomplete = () => { document.getElementById('out').textContent = 'Signed in.'; };
    };
  };
};
</script>"""


@pytest.fixture
def site() -> Iterator[Tuple[str, List[str]]]:
    """The sign-in site on 127.0.0.1 and the paths it served."""
    paths: List[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            paths.append(self.path)
            body = TOKEN.encode() if self.path == "/login" else PAGE
            self.send_response(200)
            self.send_header("Content-Type", "text/plain" if self.path == "/login" else "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", paths
    finally:
        server.shutdown()


def ref_of(read: dict, label: str) -> str:
    return next(e["ref"] for e in read["elements"] if e.get("label") == label)


def test_a_sign_in_is_kept_across_two_sessions(site, tmp_path, monkeypatch):
    origin, paths = site
    monkeypatch.setenv("HANDS_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("HANDS_STATE_KEY", KEY)

    # Session 1 signs in with the form; closing it saves the state.
    browser = hands.sync.Browser.launch(allow=[origin], state="vault")
    try:
        browser.navigate(origin + "/")
        browser.wait_for("Please sign in.")
        read = browser.read_page("interactive")
        browser.type("ada", ref_of(read, "User"))
        browser.type("hunter22", ref_of(read, "Password"))
        browser.click(ref_of(read, "Sign in"))
        browser.wait_for("Signed in.", 20000)
    finally:
        browser.close()
    assert "/login" in paths
    sealed = (tmp_path / "vault.state").read_bytes()
    assert TOKEN.encode() not in sealed and b"ada" not in sealed

    # A wrong key refuses before a browser starts.
    monkeypatch.setenv("HANDS_STATE_KEY", "not the passphrase")
    with pytest.raises(StateError, match="wrong state key"):
        hands.sync.Browser.launch(allow=[origin], state="vault")
    monkeypatch.setenv("HANDS_STATE_KEY", KEY)
    with pytest.raises(ArgumentError, match="state needs `allow`"):
        hands.sync.Browser.launch(state="vault")

    # Session 2 is signed in on its first page: no password field, no login request.
    paths.clear()
    browser = hands.sync.Browser.launch(allow=[origin], state="vault")
    try:
        browser.navigate(origin + "/")
        browser.wait_for("Welcome back, ada")
        read = browser.read_page("all")
        assert all(e.get("label") != "Password" for e in read["elements"]), read
        assert TOKEN not in repr(read)
    finally:
        browser.close()
    assert "/login" not in paths
