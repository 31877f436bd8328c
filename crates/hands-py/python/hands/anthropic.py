"""hands as the ``anthropic`` SDK's computer and browser toolsets (``anthropic`` 2.10).

``ComputerToolset`` / ``AsyncComputerToolset`` subclass ``BetaAbstractComputerToolset20260801`` /
``BetaAsyncAbstractComputerToolset20260801`` and implement all 17 members over a hands desktop;
``BrowserToolset`` / ``AsyncBrowserToolset`` subclass the ``BetaAbstract…BrowserToolset20260801``
pair and implement all 31 members over a hands browser (``file_upload`` uploads only files the
application granted with ``Browser.grant_upload``: the model sends the grant's id in
``document_ids``, and ``paths`` are refused — see :class:`GrantFilePolicy`). Hand them to the tool
runner::

    import anthropic, hands.sync
    from hands.anthropic import ComputerToolset

    desktop = hands.sync.Desktop.spawn(1280, 800)
    tools = [ComputerToolset(desktop, confirm=ask_a_person)]
    runner = anthropic.Anthropic().beta.messages.tool_runner(
        model="claude-opus-5", max_tokens=4096, tools=tools,
        messages=[{"role": "user", "content": task}])
    for message in runner: ...

Each member's input, in the SDK's own shapes, is parsed by hands' own rules (the same as hands'
runner: key grammar, coordinate bounds in screenshot pixels, coordinate and ref targets) and run by
hands' executors. A failure the
model can act on (a coordinate off the screen, a stale ref, a blocked navigation) is a
``ToolError`` with hands' text; a broken driver (the display or browser gone, the operation
cancelled) raises :class:`DriverFault`, a ``ToolsetUsageError`` — the one exception the tool
runner lets through — so the run stops instead of feeding the model errors. The SDK is imported
when this module is, so import it only with the ``anthropic`` extra installed.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Set, Union

from anthropic.tools import ToolError, ToolsetUsageError
from anthropic.tools.browser import (
    BetaAbstractBrowserToolset20260801,
    BetaAsyncAbstractBrowserToolset20260801,
    BetaBrowserNavigateResult,
    BetaBrowserState,
    BetaScreenshotResult,
)
from anthropic.tools.computer import (
    BetaAbstractComputerToolset20260801,
    BetaAsyncAbstractComputerToolset20260801,
    BetaComputerCursorPositionResult,
)

from . import errors
from ._browser import Browser, SyncBrowser
from ._desktop import Desktop, SyncDesktop
from ._hands import BROWSER_FAILED, Image

__all__ = ["ComputerToolset", "AsyncComputerToolset", "BrowserToolset", "AsyncBrowserToolset", "DriverFault",
           "GrantFilePolicy"]

#: The 17 members of ``computer_toolset_20260801``.
COMPUTER_MEMBERS = (
    "key", "hold_key", "type", "cursor_position", "mouse_move", "left_mouse_down", "left_mouse_up",
    "left_click", "left_click_drag", "right_click", "middle_click", "double_click", "triple_click",
    "scroll", "wait", "screenshot", "zoom",
)

#: The 31 members of ``browser_toolset_20260801``.
BROWSER_MEMBERS = (
    "navigate", "screenshot", "zoom", "left_click", "right_click", "middle_click", "double_click",
    "triple_click", "hover", "left_click_drag", "left_mouse_down", "left_mouse_up", "mouse_move",
    "scroll", "scroll_to", "type", "key", "hold_key", "form_input", "read_page", "find",
    "get_page_text", "wait", "read_console", "read_network", "javascript_exec", "new_tab",
    "list_tabs", "switch_tab", "close_tab", "file_upload",
)

#: How hands' computer toolset starts the text of a failed member, which the model reads.
ERROR_PREFIX = "Error: "


class DriverFault(ToolsetUsageError, RuntimeError):
    """The desktop or browser broke (gone, closed, or the operation was cancelled): the run
    stops, as hands' own runner stops on a driver fault. The original error is the cause."""


def _input_data(input: Any) -> Dict[str, Any]:
    return input.to_dict(mode="json") if hasattr(input, "to_dict") else dict(input)


def _input(input: Any) -> str:
    return json.dumps(_input_data(input))


def _fault(error: errors.HandsError) -> Optional[Exception]:
    if isinstance(error, (errors.DesktopGone, errors.BrowserGone, errors.CancelledError)):
        fault = DriverFault(f"the hands driver stopped: {error}")
        fault.__cause__ = error
        return fault
    return None


def _computer_error(error: errors.HandsError) -> Exception:
    return _fault(error) or ToolError(ERROR_PREFIX + str(error))


def _browser_error(error: errors.HandsError) -> Exception:
    fault = _fault(error)
    if fault is not None:
        return fault
    if isinstance(error, (errors.BrowserRefused, errors.ArgumentError)):
        return ToolError(str(error))
    return ToolError(BROWSER_FAILED)


def _computer_result(result: Any) -> Any:
    if isinstance(result, Image):
        return BetaScreenshotResult(data=result.base64, media_type=result.media_type)
    if isinstance(result, tuple):
        return BetaComputerCursorPositionResult(x=result[0], y=result[1])
    return None


def _sync_computer_member(name: str) -> Callable[..., Any]:
    def member(self: "ComputerToolset", context: Any, input: Any) -> Any:
        try:
            return _computer_result(self._native.member(name, _input(input), None, True))
        except errors.HandsError as e:
            raise _computer_error(e) from e

    member.__name__ = member.__qualname__ = name
    return member


def _async_computer_member(name: str) -> Callable[..., Any]:
    async def member(self: "AsyncComputerToolset", context: Any, input: Any) -> Any:
        try:
            return _computer_result(await self._native.member(name, _input(input), None, False))
        except errors.HandsError as e:
            raise _computer_error(e) from e

    member.__name__ = member.__qualname__ = name
    return member


class ComputerToolset(BetaAbstractComputerToolset20260801):
    """``computer_toolset_20260801`` on a hands desktop (synchronous).

    ``confirm`` is required while ``type``, ``key`` or ``hold_key`` are enabled (the SDK's rule);
    ``configs`` and ``tool_configs`` are the SDK's. Coordinates are in the pixels of the
    screenshots this toolset returns (sized for the model's image tier chosen when the desktop
    was made), mapped to the screen exactly."""

    def __init__(self, desktop: Union[Desktop, SyncDesktop], *, confirm: Optional[Callable[..., bool]] = None,
                 configs: Any = None, tool_configs: Any = None) -> None:
        super().__init__(configs=configs, confirm=confirm, tool_configs=tool_configs)
        self.desktop = desktop
        self._native = desktop.native


class AsyncComputerToolset(BetaAsyncAbstractComputerToolset20260801):
    """``computer_toolset_20260801`` on a hands desktop, for ``AsyncAnthropic``."""

    def __init__(self, desktop: Union[Desktop, SyncDesktop], *, confirm: Optional[Callable[..., Any]] = None,
                 configs: Any = None, tool_configs: Any = None) -> None:
        super().__init__(configs=configs, confirm=confirm, tool_configs=tool_configs)
        self.desktop = desktop
        self._native = desktop.native


for _name in COMPUTER_MEMBERS:
    setattr(ComputerToolset, _name, _sync_computer_member(_name))
    setattr(AsyncComputerToolset, _name, _async_computer_member(_name))


# --- the browser ----------------------------------------------------------------------------


class _Tabs:
    """The state reports of one toolset: tabs as the model may see them (origins only), and
    which tabs opened since the previous report (``tab_opened``)."""

    def __init__(self) -> None:
        self.seen: Optional[Set[str]] = None

    def seed(self, state: Dict[str, Any]) -> None:
        if self.seen is None:
            self.seen = {tab["id"] for tab in state["tabs"]}

    @staticmethod
    def entry(tab: Dict[str, Any]) -> Dict[str, Any]:
        return {"tab_id": tab["id"], "title": tab["title"], "url": tab["url"], "active": tab["active"]}

    def report(self, state: Dict[str, Any]) -> BetaBrowserState:
        ids = [tab["id"] for tab in state["tabs"]]
        known = self.seen if self.seen is not None else set(ids)
        opened = [{"type": "tab_opened", "tab_id": i} for i in ids if i not in known]
        self.seen = set(ids)
        return BetaBrowserState(tabs=[self.entry(t) for t in state["tabs"]], state_changes=opened)

    def active(self, state: Dict[str, Any]) -> Dict[str, Any]:
        for tab in state["tabs"]:
            if tab["active"]:
                return self.entry(tab)
        raise ToolError("No tab is open.")


def _read_text(result: Any, text_only: bool) -> str:
    """A read as the model reads it: a structured read as its ``BrowserReadV1`` JSON (only its
    text for the text-only members), plain text as it is."""
    if result is None:
        return ""
    if isinstance(result, dict):
        if text_only:
            return str(result.get("text", ""))
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    return str(result)


_TEXT_ONLY = frozenset({"get_page_text", "read_console", "read_network"})
_READS = frozenset({"read_page", "find", "javascript_exec"}) | _TEXT_ONLY


def _uploaded(result: Any) -> bool:
    """Whether ``upload_file``'s outcome says the file reached the page (hands-core
    ``FileOutcome::ok``: status and effect completed; the staged copy's cleanup may be
    ``pending``, kept until the browser closes because the page may still read it)."""
    return (isinstance(result, dict) and result.get("status") == "completed"
            and result.get("effect") == "completed")


def _browser_result(name: str, result: Any, state: Optional[Dict[str, Any]], tabs: _Tabs) -> Any:
    if name == "file_upload":
        # A refused grant (unknown, used, too large) or no chooser: nothing reached the page.
        if not _uploaded(result):
            raise ToolError(f"The upload did not complete: {json.dumps(result, sort_keys=True)}")
        return None
    if isinstance(result, Image):
        return BetaScreenshotResult(data=result.base64, media_type=result.media_type)
    if name in _READS:
        return _read_text(result, name in _TEXT_ONLY)
    if name == "navigate" and state is not None:
        tab = tabs.active(state)
        return BetaBrowserNavigateResult(url=tab["url"], title=tab["title"] or None)
    if name in ("new_tab", "switch_tab") and state is not None:
        return tabs.active(state)
    if name == "list_tabs" and state is not None:
        return [tabs.entry(t) for t in state["tabs"]]
    return None


#: Members whose result is built from the state after the call.
_NEEDS_STATE = frozenset({"navigate", "new_tab", "switch_tab", "list_tabs"})


def _sync_browser_member(name: str) -> Callable[..., Any]:
    def member(self: "BrowserToolset", context: Any, input: Any) -> Any:
        try:
            if self._tabs.seen is None:
                self._tabs.seed(self._native.state(False, None, True))
            result = None
            if name != "list_tabs":
                result = self._native.claude_member(name, _input(input), None, True)
            state = self._native.state(False, None, True) if name in _NEEDS_STATE else None
        except errors.HandsError as e:
            raise _browser_error(e) from e
        return _browser_result(name, result, state, self._tabs)

    member.__name__ = member.__qualname__ = name
    return member


def _async_browser_member(name: str) -> Callable[..., Any]:
    async def member(self: "AsyncBrowserToolset", context: Any, input: Any) -> Any:
        try:
            if self._tabs.seen is None:
                self._tabs.seed(await self._native.state(False, None, False))
            result = None
            if name != "list_tabs":
                result = await self._native.claude_member(name, _input(input), None, False)
            state = await self._native.state(False, None, False) if name in _NEEDS_STATE else None
        except errors.HandsError as e:
            raise _browser_error(e) from e
        return _browser_result(name, result, state, self._tabs)

    member.__name__ = member.__qualname__ = name
    return member


class GrantFilePolicy:
    """The file policy of hands' browser toolsets (the SDK's ``BetaFilePolicy`` protocol): files
    reach a page only through grants the application issued (``Browser.grant_upload``), each
    redeemed once by the driver. The model names a grant by its id in ``file_upload``'s
    ``document_ids`` (the API's "files the harness has staged"); ``paths`` are refused, and
    download paths are never shown."""

    def resolve_upload_paths(self, context: Any, paths: Any) -> List[str]:
        raise ToolError("file_upload takes no paths here: this browser uploads only files the "
                        "application granted; send the grant's id in document_ids")

    def resolve_upload_documents(self, context: Any, document_ids: Any) -> List[str]:
        # Passed as given: the driver redeems a grant once, and refuses an id it never issued.
        return list(document_ids)

    def is_path_visible(self, path: str) -> bool:
        return False


def _default_url_policy(browser: Union[Browser, SyncBrowser]) -> Callable[[Any, str], None]:
    def policy(context: Any, url: str) -> None:
        ok, why = browser.native.check_url(url)
        if not ok:
            raise ToolError(f"The URL is not allowed: {why}")

    return policy


class BrowserToolset(BetaAbstractBrowserToolset20260801):
    """``browser_toolset_20260801`` on a hands browser (synchronous).

    Without a ``url_policy``, ``navigate`` is checked against the browser's ``allow`` list (which
    the browser also enforces on every request). ``confirm``, ``configs`` and ``tool_configs``
    are the SDK's; ``javascript_exec`` and ``file_upload`` (off by default) need ``confirm``.
    ``file_policy`` defaults to :class:`GrantFilePolicy`."""

    def __init__(self, browser: Union[Browser, SyncBrowser], *, confirm: Optional[Callable[..., bool]] = None,
                 url_policy: Any = None, file_policy: Any = None, configs: Any = None,
                 tool_configs: Any = None) -> None:
        super().__init__(configs=configs, confirm=confirm,
                         url_policy=url_policy if url_policy is not None else _default_url_policy(browser),
                         file_policy=file_policy if file_policy is not None else GrantFilePolicy(),
                         tool_configs=tool_configs)
        self.browser = browser
        self._native = browser.native
        self._tabs = _Tabs()

    def _browser_state(self, context: Any) -> BetaBrowserState:
        return self._tabs.report(self._native.state(False, None, True))


class AsyncBrowserToolset(BetaAsyncAbstractBrowserToolset20260801):
    """``browser_toolset_20260801`` on a hands browser, for ``AsyncAnthropic`` (see
    :class:`BrowserToolset`)."""

    def __init__(self, browser: Union[Browser, SyncBrowser], *, confirm: Optional[Callable[..., Any]] = None,
                 url_policy: Any = None, file_policy: Any = None, configs: Any = None,
                 tool_configs: Any = None) -> None:
        super().__init__(configs=configs, confirm=confirm,
                         url_policy=url_policy if url_policy is not None else _default_url_policy(browser),
                         file_policy=file_policy if file_policy is not None else GrantFilePolicy(),
                         tool_configs=tool_configs)
        self.browser = browser
        self._native = browser.native
        self._tabs = _Tabs()

    async def _browser_state(self, context: Any) -> BetaBrowserState:
        return self._tabs.report(await self._native.state(False, None, False))


for _name in BROWSER_MEMBERS:
    setattr(BrowserToolset, _name, _sync_browser_member(_name))
    setattr(AsyncBrowserToolset, _name, _async_browser_member(_name))
del _name

