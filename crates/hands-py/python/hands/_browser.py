"""The browser: :class:`Browser` (async) and :class:`SyncBrowser` (blocking), one native driver.

Members are the driver contract's (``navigate``, ``read_page``, ``click``, …), with the same
argument rules as hands' own browser toolset. Reads answer ``BrowserReadV1`` dicts (refs, roles,
labels; values only of non-private fields); refs are re-checked in the page right before any
action. An ``allow`` list of origins is enforced inside the browser on every request (redirects,
pop-ups, frames, workers, fetches, WebSockets), not only at ``navigate``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _hands
from ._desktop import JAIL_INIT
from ._hands import Image

__all__ = ["Browser", "SyncBrowser"]

Cancelled = Optional[Callable[[], bool]]
Call = Tuple[str, Dict[str, Any]]


class _BrowserBase:
    """What both flavours share: grants, the allow-list check, closing."""

    def __init__(self, native: _hands.Browser) -> None:
        self._native = native

    @property
    def native(self) -> _hands.Browser:
        """The native driver (the SDK adapters use it directly)."""
        return self._native

    def allows(self, url: str) -> bool:
        """Whether the ``allow`` list admits ``url`` (always, without a list)."""
        return self._native.check_url(url)[0]

    def grant_upload(self, grant_id: str, path: str, max_bytes: int = 10 << 20) -> None:
        """Lets ``upload_file(grant_id)`` put ``path`` into the page's open file chooser, once."""
        self._native.grant_upload(grant_id, path, max_bytes)

    def grant_download(self, grant_id: str, destination: str, max_bytes: int = 100 << 20) -> None:
        """Lets ``download_file(grant_id)`` save the page's latest download at ``destination``, once."""
        self._native.grant_download(grant_id, destination, max_bytes)

    @property
    def sandbox(self) -> str:
        """Where a launched Chromium runs: ``"jail"`` or ``"none"`` (the host, or attached)."""
        return self._native.sandbox

    @property
    def isolation(self) -> str:
        """How isolated the browser is, in words (for a jail: its host uid, the limits in force)."""
        return self._native.isolation

    @property
    def host_uid(self) -> Optional[int]:
        """The host uid a jailed Chromium runs as; ``None`` unjailed or once closed."""
        return self._native.host_uid

    def close(self) -> None:
        """Saves the ``state`` sign-in (if any), stops a launched Chromium (an attached one is
        left running) and removes its jail."""
        self._native.close()


def _settings(settings: Dict[str, Any]) -> _hands.BrowserSettings:
    allow = settings.get("allow")
    if allow is not None:
        settings = {**settings, "allow": list(allow)}
    return _hands.BrowserSettings(**settings, init=JAIL_INIT)


def _tab(tab_id: Optional[str]) -> Dict[str, Any]:
    return {"tab_id": tab_id}


class Browser(_BrowserBase):
    """Chromium with async methods: ``await Browser.launch(allow=[...])`` or ``Browser.attach(ws)``.

    Every member takes ``tab_id`` (``None``: the active tab) and an optional ``cancelled``
    callable; a cancelled asyncio task stops the member too.
    """

    @classmethod
    async def launch(cls, **settings: Any) -> "Browser":
        """Launches Chromium (``/usr/bin/chromium`` unless ``executable``) on a fresh profile.

        Settings (keywords): ``allow``, origin patterns (``https://example.com``,
        ``https://*.example.com``, ``http://127.0.0.1:8000``) every request must match — anything
        else is blocked inside the browser; ``viewport`` ``(width, height)``; ``image_format``
        ``"jpeg"`` (default, ``jpeg_quality``) or ``"png"``; ``values``, whether reads report
        field values (``"non_private"``: all but passwords, one-time codes and card numbers;
        ``"never"``); ``executable``; ``sandbox``, where Chromium runs: ``"jail"`` (the default:
        a browser jail of its own — bubblewrap, every namespace unshared, seccomp, a private
        filesystem and uid, limits — whose only way out is the browser's proxy enforcing
        ``allow``; :class:`~hands.errors.SandboxUnavailable` where no jail can be made) or
        ``"none"`` (on the host, as the caller); ``state``, a saved sign-in's name, as ``hands run
        --state``: the cookies, localStorage and IndexedDB of the ``allow`` origins are loaded
        before the first page and saved, sealed with the passphrase in ``HANDS_STATE_KEY``, when
        the browser is closed (files in ``HANDS_STATE_DIR``, default
        ``~/.local/share/hands/state``; :class:`~hands.errors.StateError` for a wrong key or a
        changed file)."""
        return cls(await _hands.Browser.launch(_settings(settings)))

    @classmethod
    async def attach(cls, ws_url: str, **settings: Any) -> "Browser":
        """Attaches to a running Chromium's ``ws://`` DevTools endpoint (settings as for
        :meth:`launch`, without ``executable`` and ``sandbox``: it runs wherever it was
        started); :meth:`close` leaves it running."""
        return cls(await _hands.Browser.attach(ws_url, _settings(settings)))

    async def call(self, member: str, arguments: Dict[str, Any], *, cancelled: Cancelled = None) -> Any:
        """Calls a member with its full arguments object (every field, ``None`` where allowed)."""
        return await self._native.call(member, json.dumps(arguments), cancelled, False)

    async def state(self, *, raw: bool = False, cancelled: Cancelled = None) -> Dict[str, Any]:
        """``{"tabs": [{"id", "title", "url", "active"}]}``: URLs as origins, or ``raw``."""
        return await self._native.state(raw, cancelled, False)

    async def navigate(self, url: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("navigate", {"url": url, **_tab(tab_id)}, cancelled=cancelled)

    async def read_page(self, filter: str = "all", *, tab_id: Optional[str] = None,
                        cancelled: Cancelled = None) -> Dict[str, Any]:
        """A ``BrowserReadV1``: ``{"version": 1, "text", "elements", "omitted"}``."""
        return await self.call("read_page", {"filter": filter, **_tab(tab_id)}, cancelled=cancelled)

    async def get_page_text(self, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Any:
        return await self.call("get_page_text", _tab(tab_id), cancelled=cancelled)

    async def find(self, query: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Any:
        return await self.call("find", {"query": query, **_tab(tab_id)}, cancelled=cancelled)

    async def click(self, target: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("click", {"target": target, **_tab(tab_id)}, cancelled=cancelled)

    async def type(self, text: str, target: Optional[str] = None, *, tab_id: Optional[str] = None,
                   cancelled: Cancelled = None) -> Optional[str]:
        """Replaces ``target``'s content with ``text`` (or types at the focused caret)."""
        return await self.call("type", {"text": text, "target": target, **_tab(tab_id)}, cancelled=cancelled)

    async def key(self, keys: Sequence[str], *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("key", {"keys": list(keys), **_tab(tab_id)}, cancelled=cancelled)

    async def scroll(self, direction: str, amount: int, *, tab_id: Optional[str] = None,
                     cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("scroll", {"direction": direction, "amount": amount, **_tab(tab_id)},
                               cancelled=cancelled)

    async def scroll_to(self, target: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("scroll_to", {"target": target, **_tab(tab_id)}, cancelled=cancelled)

    async def wait_for(self, text: str, timeout_ms: int = 5000, *, tab_id: Optional[str] = None,
                       cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("wait_for", {"text": text, "timeout_ms": timeout_ms, **_tab(tab_id)},
                               cancelled=cancelled)

    async def select_option(self, target: str, values: Sequence[str], *, tab_id: Optional[str] = None,
                            cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("select_option", {"target": target, "values": list(values), **_tab(tab_id)},
                               cancelled=cancelled)

    async def hover(self, target: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("hover", {"target": target, **_tab(tab_id)}, cancelled=cancelled)

    async def screenshot(self, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Image:
        return await self.call("screenshot", _tab(tab_id), cancelled=cancelled)

    async def zoom(self, region: Sequence[int], *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Image:
        return await self.call("zoom", {"region": list(region), **_tab(tab_id)}, cancelled=cancelled)

    async def new_tab(self, url: Optional[str] = None, *, cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("new_tab", {"url": url}, cancelled=cancelled)

    async def switch_tab(self, tab_id: str, *, cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("switch_tab", {"tab_id": tab_id}, cancelled=cancelled)

    async def close_tab(self, tab_id: str, *, cancelled: Cancelled = None) -> Optional[str]:
        return await self.call("close_tab", {"tab_id": tab_id}, cancelled=cancelled)

    async def run_script(self, source: str, timeout_ms: int = 5000, *, tab_id: Optional[str] = None,
                         cancelled: Cancelled = None) -> str:
        return await self.call("run_script", {"source": source, "timeout_ms": timeout_ms, **_tab(tab_id)},
                               cancelled=cancelled)

    async def upload_file(self, grant_id: str, *, cancelled: Cancelled = None) -> Dict[str, Any]:
        return await self.call("upload_file", {"grant_id": grant_id}, cancelled=cancelled)

    async def download_file(self, grant_id: str, *, cancelled: Cancelled = None) -> Dict[str, Any]:
        return await self.call("download_file", {"grant_id": grant_id}, cancelled=cancelled)

    async def __aenter__(self) -> "Browser":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class SyncBrowser(_BrowserBase):
    """:class:`Browser` with blocking methods. Exported as ``hands.sync.Browser``."""

    @classmethod
    def launch(cls, **settings: Any) -> "SyncBrowser":
        """See :meth:`Browser.launch`."""
        return cls(_hands.Browser.launch(_settings(settings), blocking=True))

    @classmethod
    def attach(cls, ws_url: str, **settings: Any) -> "SyncBrowser":
        """See :meth:`Browser.attach`."""
        return cls(_hands.Browser.attach(ws_url, _settings(settings), blocking=True))

    def call(self, member: str, arguments: Dict[str, Any], *, cancelled: Cancelled = None) -> Any:
        return self._native.call(member, json.dumps(arguments), cancelled, True)

    def state(self, *, raw: bool = False, cancelled: Cancelled = None) -> Dict[str, Any]:
        return self._native.state(raw, cancelled, True)

    def navigate(self, url: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return self.call("navigate", {"url": url, **_tab(tab_id)}, cancelled=cancelled)

    def read_page(self, filter: str = "all", *, tab_id: Optional[str] = None,
                  cancelled: Cancelled = None) -> Dict[str, Any]:
        return self.call("read_page", {"filter": filter, **_tab(tab_id)}, cancelled=cancelled)

    def get_page_text(self, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Any:
        return self.call("get_page_text", _tab(tab_id), cancelled=cancelled)

    def find(self, query: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Any:
        return self.call("find", {"query": query, **_tab(tab_id)}, cancelled=cancelled)

    def click(self, target: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return self.call("click", {"target": target, **_tab(tab_id)}, cancelled=cancelled)

    def type(self, text: str, target: Optional[str] = None, *, tab_id: Optional[str] = None,
             cancelled: Cancelled = None) -> Optional[str]:
        return self.call("type", {"text": text, "target": target, **_tab(tab_id)}, cancelled=cancelled)

    def key(self, keys: Sequence[str], *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return self.call("key", {"keys": list(keys), **_tab(tab_id)}, cancelled=cancelled)

    def scroll(self, direction: str, amount: int, *, tab_id: Optional[str] = None,
               cancelled: Cancelled = None) -> Optional[str]:
        return self.call("scroll", {"direction": direction, "amount": amount, **_tab(tab_id)}, cancelled=cancelled)

    def scroll_to(self, target: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return self.call("scroll_to", {"target": target, **_tab(tab_id)}, cancelled=cancelled)

    def wait_for(self, text: str, timeout_ms: int = 5000, *, tab_id: Optional[str] = None,
                 cancelled: Cancelled = None) -> Optional[str]:
        return self.call("wait_for", {"text": text, "timeout_ms": timeout_ms, **_tab(tab_id)}, cancelled=cancelled)

    def select_option(self, target: str, values: Sequence[str], *, tab_id: Optional[str] = None,
                      cancelled: Cancelled = None) -> Optional[str]:
        return self.call("select_option", {"target": target, "values": list(values), **_tab(tab_id)},
                         cancelled=cancelled)

    def hover(self, target: str, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Optional[str]:
        return self.call("hover", {"target": target, **_tab(tab_id)}, cancelled=cancelled)

    def screenshot(self, *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Image:
        return self.call("screenshot", _tab(tab_id), cancelled=cancelled)

    def zoom(self, region: Sequence[int], *, tab_id: Optional[str] = None, cancelled: Cancelled = None) -> Image:
        return self.call("zoom", {"region": list(region), **_tab(tab_id)}, cancelled=cancelled)

    def new_tab(self, url: Optional[str] = None, *, cancelled: Cancelled = None) -> Optional[str]:
        return self.call("new_tab", {"url": url}, cancelled=cancelled)

    def switch_tab(self, tab_id: str, *, cancelled: Cancelled = None) -> Optional[str]:
        return self.call("switch_tab", {"tab_id": tab_id}, cancelled=cancelled)

    def close_tab(self, tab_id: str, *, cancelled: Cancelled = None) -> Optional[str]:
        return self.call("close_tab", {"tab_id": tab_id}, cancelled=cancelled)

    def run_script(self, source: str, timeout_ms: int = 5000, *, tab_id: Optional[str] = None,
                   cancelled: Cancelled = None) -> str:
        return self.call("run_script", {"source": source, "timeout_ms": timeout_ms, **_tab(tab_id)},
                         cancelled=cancelled)

    def upload_file(self, grant_id: str, *, cancelled: Cancelled = None) -> Dict[str, Any]:
        return self.call("upload_file", {"grant_id": grant_id}, cancelled=cancelled)

    def download_file(self, grant_id: str, *, cancelled: Cancelled = None) -> Dict[str, Any]:
        return self.call("download_file", {"grant_id": grant_id}, cancelled=cancelled)

    def __enter__(self) -> "SyncBrowser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


