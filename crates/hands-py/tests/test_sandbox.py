"""Where a spawned desktop's and a launched browser's programs run: in jails by default (real
bubblewrap jails, checked from the host's /proc), on the host only with ``sandbox="none"``; a
jailed app's only way out is the proxy allowing the ``allow`` origins."""

from __future__ import annotations

import http.server
import os
import threading
import time
from pathlib import Path
from typing import Iterator, List, Optional

import pytest

import hands
import hands.sync

#: The first host uid of the jails' range (hands-jail's uid allocator).
JAIL_UID_BASE = 3_000_000

#: What a jailed app runs: fetch the URL through the environment's proxy, write what happened.
FETCH = r"""
import os, sys, urllib.request, urllib.error
url, out = sys.argv[1], os.path.join(os.environ["HOME"], sys.argv[2])
try:
    text = "ok " + urllib.request.urlopen(url, timeout=10).read().decode()
except urllib.error.HTTPError as e:
    text = "refused %d %s" % (e.code, e.read().decode(errors="replace"))
except Exception as e:
    text = "error %r" % (e,)
with open(out + ".tmp", "w") as f:
    f.write(text)
os.rename(out + ".tmp", out)
"""


def _status(pid: int, field: str) -> Optional[str]:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].split()[0]
    except OSError:
        return None
    return None


def _pid_ns(pid: int) -> Optional[str]:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _program(pid: int) -> str:
    """The basename of a process's argv[0] ("" once gone)."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""
    return os.path.basename(argv0)


def _processes(name: str) -> List[int]:
    """Host pids whose program is ``name`` (the basename of argv[0] or of the executable)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv0 = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if os.path.basename(argv0) == name:
            pids.append(int(entry))
    return pids


def _wait_for(path: Path, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return path.read_text()
        time.sleep(0.1)
    raise AssertionError(f"{path} did not appear within {timeout} s")


class _Server:
    """A plain HTTP server on the host's loopback that records the paths it was asked for."""

    def __init__(self) -> None:
        self.paths: List[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.paths.append(self.path)
                body = b"hello from the host"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    try:
        yield s
    finally:
        s.close()


def test_a_spawned_desktop_runs_jailed_by_default():
    before = set(_processes("Xvfb"))
    desktop = hands.sync.Desktop.spawn(320, 240)
    try:
        assert desktop.sandbox == "jail"
        assert desktop.host_uid is not None
        assert f"host uid {desktop.host_uid}" in desktop.isolation and "limits:" in desktop.isolation
        assert desktop.home_dir is not None and Path(desktop.home_dir).is_dir()
        ours = _pid_ns(os.getpid())
        new = [pid for pid in _processes("Xvfb") if pid not in before]
        if os.getuid() == 0:
            assert desktop.host_uid >= JAIL_UID_BASE
            mine = [pid for pid in new if _status(pid, "Uid") == str(desktop.host_uid)]
            assert mine, f"no Xvfb runs as the jail's uid {desktop.host_uid} (new Xvfb: {new})"
        else:
            mine = new
        assert mine and all(_pid_ns(pid) != ours for pid in mine), "Xvfb shares our pid namespace"
        # And the desktop works: a screenshot of the jailed server.
        assert desktop.screenshot().width == 320
    finally:
        desktop.close()
    assert desktop.home_dir is None


def test_sandbox_none_runs_the_desktop_on_the_host():
    desktop = hands.sync.Desktop.spawn(320, 240, sandbox="none")
    try:
        assert desktop.sandbox == "none" and desktop.isolation.startswith("none")
        assert desktop.home_dir is None and desktop.host_uid is None
        children = [pid for pid in _processes("Xvfb") if _status(pid, "PPid") == str(os.getpid())]
        assert len(children) == 1, f"our Xvfb children: {children}"
        [xvfb] = children
        assert _status(xvfb, "Uid") == str(os.getuid())
        assert _pid_ns(xvfb) == _pid_ns(os.getpid())
    finally:
        desktop.close()


def test_a_jailed_apps_only_way_out_is_the_allow_list(server):
    # No allow list: the app reaches nothing (neither the host's loopback nor a name), and the
    # refusal of a name says how to open an origin.
    desktop = hands.sync.Desktop.spawn(320, 240)
    try:
        desktop.launch("python3", "-c", FETCH, server.origin + "/denied", "local.txt")
        desktop.launch("python3", "-c", FETCH, "http://example.com/", "name.txt")
        local = _wait_for(Path(desktop.home_dir) / "local.txt")
        name = _wait_for(Path(desktop.home_dir) / "name.txt")
    finally:
        desktop.close()
    assert local.startswith("refused 403"), local
    assert name.startswith("refused 403") and "allow=" in name, name
    assert server.paths == []

    # Its origin allowed: the same fetch goes through the proxy to the host's server.
    desktop = hands.sync.Desktop.spawn(320, 240, allow=[server.origin])
    try:
        desktop.launch("python3", "-c", FETCH, server.origin + "/allowed", "local.txt")
        result = _wait_for(Path(desktop.home_dir) / "local.txt")
    finally:
        desktop.close()
    assert result == "ok hello from the host", result
    assert server.paths == ["/allowed"]


def test_a_bad_allow_list_is_an_argument_error():
    with pytest.raises(hands.ArgumentError, match="allow"):
        hands.sync.Desktop.spawn(320, 240, allow=["not an origin"])
    with pytest.raises(hands.ArgumentError, match="sandbox"):
        hands.sync.Desktop.spawn(320, 240, sandbox="maybe")


def test_no_jail_is_sandbox_unavailable_saying_what_to_do(monkeypatch, tmp_path):
    # No init anywhere: not at $HANDS_JAIL_INIT, not on PATH.
    monkeypatch.setenv("HANDS_JAIL_INIT", str(tmp_path / "missing-init"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(hands.SandboxUnavailable) as raised:
        hands.sync.Desktop.spawn(320, 240)
    assert isinstance(raised.value, hands.StartError)
    text = str(raised.value)
    assert "missing-init" in text and "HANDS_JAIL_INIT" in text and 'sandbox="none"' in text, text
    with pytest.raises(hands.SandboxUnavailable):
        hands.sync.Browser.launch()


def test_a_launched_browser_runs_jailed_by_default():
    browser = hands.sync.Browser.launch()
    try:
        assert browser.sandbox == "jail"
        uid = browser.host_uid
        assert uid is not None and f"host uid {uid}" in browser.isolation
        browser.navigate("data:text/html,<title>jailed</title><p>hi")
        assert "hi" in str(browser.get_page_text())
        if os.getuid() == 0:
            # Chromium's processes run as the jail's own uid, in another pid namespace (only
            # bubblewrap's outer process, which made the jail, is in ours).
            assert uid >= JAIL_UID_BASE
            jailed = [int(p) for p in os.listdir("/proc")
                      if p.isdigit() and _status(int(p), "Uid") == str(uid) and _program(int(p)) != "bwrap"]
            assert any("chrom" in _program(pid) for pid in jailed), \
                f"no Chromium runs as the browser jail's uid {uid}: {[(p, _program(p)) for p in jailed]}"
            assert all(_pid_ns(pid) != _pid_ns(os.getpid()) for pid in jailed), \
                [(p, _program(p), _pid_ns(p)) for p in jailed]
    finally:
        browser.close()
    assert browser.host_uid is None


def test_sandbox_none_launches_the_browser_on_the_host():
    browser = hands.sync.Browser.launch(sandbox="none")
    try:
        assert browser.sandbox == "none" and browser.host_uid is None
        browser.navigate("data:text/html,<p>host")
        assert "host" in str(browser.get_page_text())
    finally:
        browser.close()
