"""hands as the ``openai`` SDK's browser and computer drivers (``openai`` 3.51).

``BrowserDriver`` / ``AsyncBrowserDriver`` satisfy ``openai.lib.browser``'s driver protocols
(every member of the contract but ``list_tabs``, which the SDK derives from ``state()``), and
``ComputerDriver`` / ``AsyncComputerDriver`` those of ``openai.lib.computer``. Plug them into
``BrowserToolset`` / ``ComputerToolset`` and ``ResponsesToolRunner``::

    import hands.sync
    from hands.openai import BrowserDriver, url_policy
    from openai.lib.browser import BrowserToolset
    from openai.lib.responses_tool_runner import ResponsesToolRunner

    browser = hands.sync.Browser.launch(allow=["https://shop.example"])
    toolset = BrowserToolset(BrowserDriver(browser), confirm=ask_a_person,
                             url_policy=url_policy(browser))
    ResponsesToolRunner(browser=toolset).run(client, {"model": ..., "input": task})

What the SDK checks, these answer exactly: ``state()`` is ``{"tabs": [...]}`` with origins only
(the state format without observation metadata); reads are ``BrowserReadV1`` dicts;
screenshots are native ``input_image`` / ``computer_screenshot`` parts with a data URL; file
transfers answer a ``BrowserFileOutcome``. A recoverable failure (a stale ref, a navigation the
allow-list blocked, invalid arguments) raises the SDK's ``BrowserError`` with text safe for the
model; cancellation raises ``BrowserCancelledError``; anything else is left for the SDK to
report as a generic failure. Every method accepts the SDK's ``cancelled`` keyword and polls it
while the driver works. The SDK is imported when these classes are first used, not before.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional, Union

from . import errors
from ._browser import Browser, SyncBrowser
from ._desktop import Desktop, SyncDesktop
from ._hands import Image

__all__ = ["BrowserDriver", "AsyncBrowserDriver", "ComputerDriver", "AsyncComputerDriver", "url_policy"]

Cancelled = Optional[Callable[[], bool]]

#: The driver contract's members a driver implements (``list_tabs`` is derived from ``state``).
BROWSER_MEMBERS = (
    "navigate", "read_page", "get_page_text", "find", "click", "type", "key", "scroll",
    "scroll_to", "wait_for", "select_option", "hover", "screenshot", "zoom", "new_tab",
    "switch_tab", "close_tab", "read_page_scoped", "click_at", "drag_path", "hold_keys",
    "hover_at", "set_checked", "read_diagnostics", "run_script", "upload_file", "download_file",
)

#: The computer actions, each one method of the driver.
COMPUTER_ACTIONS = ("click", "double_click", "drag", "keypress", "move", "scroll", "type", "wait")


def _sdk_browser() -> Any:
    from openai.lib import browser

    return browser


def _browser_result(result: Any) -> Any:
    if isinstance(result, Image):
        return {"type": "input_image", "image_url": result.data_url()}
    return result


def _browser_failure(error: errors.HandsError) -> Exception:
    """The SDK's exception for a hands error: safe text for the model, or cancellation."""
    sdk = _sdk_browser()
    if isinstance(error, (errors.BrowserRefused, errors.ArgumentError)):
        return sdk.BrowserError(str(error))
    if isinstance(error, errors.CancelledError):
        return sdk.BrowserCancelledError("Browser execution was cancelled.")
    return error


def url_policy(browser: Union[Browser, SyncBrowser]) -> Callable[..., bool]:
    """An SDK ``url_policy`` that admits what the browser's ``allow`` list admits (the same
    list the browser enforces on every request)."""

    def policy(context: Any, url: str) -> bool:
        return browser.allows(url)

    return policy


def _sync_member(member: str) -> Callable[..., Any]:
    def call(self: "BrowserDriver", action: Dict[str, Any], *, cancelled: Cancelled = None) -> Any:
        try:
            result = self._native.call(member, json.dumps(action), cancelled, True)
        except errors.HandsError as e:
            raise _browser_failure(e) from None
        return _browser_result(result)

    call.__name__ = call.__qualname__ = member
    call.__doc__ = f"The driver contract's ``{member}``."
    return call


def _async_member(member: str) -> Callable[..., Any]:
    async def call(self: "AsyncBrowserDriver", action: Dict[str, Any], *, cancelled: Cancelled = None) -> Any:
        try:
            result = await self._native.call(member, json.dumps(action), cancelled, False)
        except errors.HandsError as e:
            raise _browser_failure(e) from None
        return _browser_result(result)

    call.__name__ = call.__qualname__ = member
    call.__doc__ = f"The driver contract's ``{member}``."
    return call


class BrowserDriver:
    """A synchronous ``openai.lib.browser.BrowserDriver`` over a hands browser."""

    def __init__(self, browser: Union[Browser, SyncBrowser]) -> None:
        self.browser = browser
        self._native = browser.native

    def state(self, *, cancelled: Cancelled = None) -> Dict[str, Any]:
        """Every tab: stable id, title, origin, and the one active tab."""
        try:
            return self._native.state(False, cancelled, True)
        except errors.HandsError as e:
            raise _browser_failure(e) from None


class AsyncBrowserDriver:
    """An ``openai.lib.browser.AsyncBrowserDriver`` over a hands browser."""

    def __init__(self, browser: Union[Browser, SyncBrowser]) -> None:
        self.browser = browser
        self._native = browser.native

    async def state(self, *, cancelled: Cancelled = None) -> Dict[str, Any]:
        """Every tab: stable id, title, origin, and the one active tab."""
        try:
            return await self._native.state(False, cancelled, False)
        except errors.HandsError as e:
            raise _browser_failure(e) from None


for _member in BROWSER_MEMBERS:
    setattr(BrowserDriver, _member, _sync_member(_member))
    setattr(AsyncBrowserDriver, _member, _async_member(_member))


def _action(action: Any) -> str:
    data = action.to_dict(mode="json") if hasattr(action, "to_dict") else dict(action)
    return json.dumps(data)


def _screenshot(image: Image) -> Dict[str, Any]:
    return {"type": "computer_screenshot", "image_url": image.data_url()}


def _sync_action(kind: str) -> Callable[..., None]:
    def act(self: "ComputerDriver", action: Any, *, cancelled: Cancelled = None) -> None:
        self._native.openai_action(_action(action), cancelled, True)

    act.__name__ = act.__qualname__ = kind
    act.__doc__ = f"The computer action ``{kind}``, in screenshot pixels."
    return act


def _async_action(kind: str) -> Callable[..., Any]:
    async def act(self: "AsyncComputerDriver", action: Any, *, cancelled: Cancelled = None) -> None:
        await self._native.openai_action(_action(action), cancelled, False)

    act.__name__ = act.__qualname__ = kind
    act.__doc__ = f"The computer action ``{kind}``, in screenshot pixels."
    return act


class ComputerDriver:
    """A synchronous ``openai.lib.computer.ComputerDriver`` over a hands desktop.

    Actions mean what they mean in hands' own runner: ``keypress`` presses its keys together as
    one chord, ``scroll`` turns 100 px into one wheel notch, ``wait`` waits for the screen to
    settle (500 ms quiet, at most 3 s) instead of sleeping. Coordinates are in the pixels of the
    last screenshot, mapped to the screen exactly."""

    def __init__(self, desktop: Union[Desktop, SyncDesktop]) -> None:
        self.desktop = desktop
        self._native = desktop.native

    def screenshot(self, *, cancelled: Cancelled = None) -> Dict[str, Any]:
        """The settled screen, sized for the model, as a ``computer_screenshot``."""
        return _screenshot(self._native.openai_screenshot(cancelled, True))


class AsyncComputerDriver:
    """An ``openai.lib.computer.AsyncComputerDriver`` over a hands desktop (see
    :class:`ComputerDriver`)."""

    def __init__(self, desktop: Union[Desktop, SyncDesktop]) -> None:
        self.desktop = desktop
        self._native = desktop.native

    async def screenshot(self, *, cancelled: Cancelled = None) -> Dict[str, Any]:
        """The settled screen, sized for the model, as a ``computer_screenshot``."""
        return _screenshot(await self._native.openai_screenshot(cancelled, False))


for _kind in COMPUTER_ACTIONS:
    setattr(ComputerDriver, _kind, _sync_action(_kind))
    setattr(AsyncComputerDriver, _kind, _async_action(_kind))
del _member, _kind
