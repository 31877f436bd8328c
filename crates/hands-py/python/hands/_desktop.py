"""The desktop: :class:`Desktop` (async) and :class:`SyncDesktop` (blocking), one native driver.

Coordinates are screenshot pixels: the pixels of the last screenshot this desktop took (sized
for the model's image limits), mapped to the screen exactly. Every action is one of the members
of Claude's ``computer_toolset_20260801``, run by hands' own executor, so it behaves exactly as
in hands' runner: the same key grammar (X keysym names and the aliases models emit, ``ctrl+s``),
the same limits, the same error texts.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from . import _hands
from ._hands import Image

__all__ = ["Desktop", "SyncDesktop", "Client"]

Client = _hands.Client
Cancelled = Optional[Callable[[], bool]]
Point = Tuple[int, int]
Member = Tuple[str, Dict[str, Any]]

#: The jail's init program, shipped inside the package (crates/hands-py/build.rs puts it here).
JAIL_INIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hands-jail-init")

_CLICKS = {("left", 1): "left_click", ("left", 2): "double_click", ("left", 3): "triple_click",
           ("right", 1): "right_click", ("middle", 1): "middle_click"}


def _modifiers(input: Dict[str, Any], modifiers: Union[str, Sequence[str], None]) -> Dict[str, Any]:
    if modifiers:
        input["text"] = modifiers if isinstance(modifiers, str) else "+".join(modifiers)
    return input


def _click(x: Optional[int], y: Optional[int], button: str, count: int,
           modifiers: Union[str, Sequence[str], None]) -> Member:
    name = _CLICKS.get((button, count))
    if name is None:
        raise ValueError(f"unsupported click: button {button!r} {count} time(s)")
    input: Dict[str, Any] = {}
    if x is not None or y is not None:
        input["coordinate"] = [x, y]
    return name, _modifiers(input, modifiers)


def _scroll(direction: str, amount: int, at: Optional[Point],
            modifiers: Union[str, Sequence[str], None]) -> Member:
    input: Dict[str, Any] = {"scroll_direction": direction, "scroll_amount": amount}
    if at is not None:
        input["coordinate"] = list(at)
    return "scroll", _modifiers(input, modifiers)


def _drag(start: Point, end: Point, modifiers: Union[str, Sequence[str], None]) -> Member:
    return "left_click_drag", _modifiers({"start_coordinate": list(start), "coordinate": list(end)}, modifiers)


def _key(keys: str, repeat: int) -> Member:
    input: Dict[str, Any] = {"text": keys}
    if repeat != 1:
        input["repeat"] = repeat
    return "key", input


class _DesktopBase:
    """What both flavours share: construction, geometry, programs, closing."""

    def __init__(self, native: _hands.Desktop) -> None:
        self._native = native

    @classmethod
    def spawn(cls, width: int = 1280, height: int = 800, *, sandbox: str = "jail",
              allow: Optional[Sequence[str]] = None, workspace: Optional[str] = None,
              bind_workspace: bool = False, **settings: Any) -> Any:
        """Spawns a private Xvfb of ``width`` x ``height`` (stopped by :meth:`close`).

        ``sandbox="jail"`` (the default): Xvfb and every program :meth:`launch` starts run in a
        jail of their own — bubblewrap, every namespace unshared, no capabilities, seccomp, a
        private filesystem (home ``/home/user``, :attr:`home_dir` on the host), a uid of their
        own, limits — whose only way out is a proxy (``http_proxy`` and friends point at it)
        allowing the origins of ``allow`` (``["https://example.com", "http://127.0.0.1:8000"]``;
        none, everything refused, when empty). ``workspace``: a directory copied to the jail's
        ``/workspace`` (bound in place with ``bind_workspace``). Raises
        :class:`~hands.errors.SandboxUnavailable` where no jail can be made.
        ``sandbox="none"``: on the host, as the caller, with the caller's files and network.

        Settings (keywords): ``tier`` is the model's image tier (``"high"``: long edge up to
        2576 px; ``"standard"``: 1568 px and 1.15 MP), ``max_long_edge`` an extra cap on
        screenshots, ``image_format`` ``"png"`` or ``"jpeg"`` (``jpeg_quality``),
        ``settle_quiet_ms`` / ``settle_cap_ms`` the quiet period and the cap of the wait for the
        screen to stop changing before a screenshot, ``device_pixel_ratio`` capture pixels per
        screen pixel."""
        return cls(_hands.Desktop.spawn(
            width, height, _hands.DesktopSettings(**settings), sandbox=sandbox,
            allow=None if allow is None else list(allow), workspace=workspace,
            bind_workspace=bind_workspace, init=JAIL_INIT))

    @classmethod
    def attach(cls, display: Optional[str] = None, **settings: Any) -> Any:
        """Attaches to ``display`` (``$DISPLAY`` when ``None``); :meth:`close` leaves it running.
        Settings as for :meth:`spawn`."""
        return cls(_hands.Desktop.attach(display, _hands.DesktopSettings(**settings)))

    @property
    def native(self) -> _hands.Desktop:
        """The native driver (the SDK adapters use it directly)."""
        return self._native

    @property
    def display(self) -> str:
        """The X display name, e.g. ``:93`` (set ``DISPLAY`` to it to start programs yourself)."""
        return self._native.display

    @property
    def screen_size(self) -> Point:
        """``(width, height)`` of the screen in input pixels."""
        return self._native.screen_size

    @property
    def shot_size(self) -> Point:
        """``(width, height)`` of screenshots, the space every coordinate is given in."""
        return self._native.shot_size()

    @property
    def sandbox(self) -> str:
        """Where this desktop's programs run: ``"jail"`` or ``"none"`` (the host)."""
        return self._native.sandbox

    @property
    def isolation(self) -> str:
        """How isolated this desktop's programs are, in words: for a jail, its host uid and the
        limits in force (``"jail: …; host uid 3000017; limits: …"``), else ``"none: …"``."""
        return self._native.isolation

    @property
    def home_dir(self) -> Optional[str]:
        """The host directory that is the jail's home (``$HOME`` of the programs it runs);
        ``None`` unjailed or once closed (the jail's files are removed then)."""
        path = self._native.home_dir
        return None if path is None else str(path)

    @property
    def workspace_dir(self) -> Optional[str]:
        """The host directory that is the jail's ``/workspace``; ``None`` unjailed or closed."""
        path = self._native.workspace_dir
        return None if path is None else str(path)

    @property
    def host_uid(self) -> Optional[int]:
        """The host uid the jail's programs run as; ``None`` unjailed or once closed."""
        return self._native.host_uid

    def launch(self, program: str, *args: str) -> Client:
        """Starts ``program`` on this display, in the desktop's jail when it has one (its
        environment then is the jail's: ``HOME``, ``PATH``, the proxy variables, ``DISPLAY``);
        it is killed when the desktop closes."""
        return self._native.launch(program, list(args))

    def close(self) -> None:
        """Kills the launched programs and, for a spawned desktop, stops Xvfb and removes its
        jail (everything left in it, and its files)."""
        self._native.close()

    @property
    def closed(self) -> bool:
        return self._native.closed

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(display={self.display!r}, screen={self.screen_size}, "
                f"sandbox={self.sandbox!r})")


class Desktop(_DesktopBase):
    """An X11 desktop with async methods. ``Desktop.spawn(1280, 800)`` or ``Desktop.attach()``.

    Every method takes an optional ``cancelled`` callable, polled while the action runs; a
    cancelled asyncio task stops the action too. Use as ``async with`` (or ``with``) to close it.
    """

    async def member(self, name: str, input: Dict[str, Any], *, cancelled: Cancelled = None) -> Any:
        """Runs one of Claude's computer toolset members by name, with its input object."""
        return await self._native.member(name, json.dumps(input), cancelled, False)

    async def screenshot(self, *, cancelled: Cancelled = None) -> Image:
        """A screenshot once the screen has settled, sized for the model."""
        return await self.member("screenshot", {}, cancelled=cancelled)

    async def zoom(self, region: Sequence[int], *, cancelled: Cancelled = None) -> Image:
        """``[x0, y0, x1, y1]`` of the screenshot at full resolution."""
        return await self.member("zoom", {"region": list(region)}, cancelled=cancelled)

    async def click(self, x: Optional[int] = None, y: Optional[int] = None, *, button: str = "left",
                    count: int = 1, modifiers: Union[str, Sequence[str], None] = None,
                    cancelled: Cancelled = None) -> None:
        """Clicks at ``(x, y)`` (or where the pointer is), with ``modifiers`` held."""
        await self.member(*_click(x, y, button, count, modifiers), cancelled=cancelled)

    async def move(self, x: int, y: int, *, cancelled: Cancelled = None) -> None:
        await self.member("mouse_move", {"coordinate": [x, y]}, cancelled=cancelled)

    async def mouse_down(self, *, cancelled: Cancelled = None) -> None:
        await self.member("left_mouse_down", {}, cancelled=cancelled)

    async def mouse_up(self, *, cancelled: Cancelled = None) -> None:
        await self.member("left_mouse_up", {}, cancelled=cancelled)

    async def drag(self, start: Point, end: Point, *, modifiers: Union[str, Sequence[str], None] = None,
                   cancelled: Cancelled = None) -> None:
        await self.member(*_drag(start, end, modifiers), cancelled=cancelled)

    async def scroll(self, direction: str, amount: int = 3, *, at: Optional[Point] = None,
                     modifiers: Union[str, Sequence[str], None] = None, cancelled: Cancelled = None) -> None:
        """Turns the wheel ``amount`` notches ``up``, ``down``, ``left`` or ``right``."""
        await self.member(*_scroll(direction, amount, at, modifiers), cancelled=cancelled)

    async def type(self, text: str, *, cancelled: Cancelled = None) -> None:
        """Types ``text`` literally (any Unicode, under any layout)."""
        await self.member("type", {"text": text}, cancelled=cancelled)

    async def key(self, keys: str, *, repeat: int = 1, cancelled: Cancelled = None) -> None:
        """Presses a key or chord (``"Return"``, ``"ctrl+s"``), several separated by spaces."""
        await self.member(*_key(keys, repeat), cancelled=cancelled)

    async def hold_key(self, keys: str, seconds: float, *, cancelled: Cancelled = None) -> None:
        await self.member("hold_key", {"text": keys, "duration": seconds}, cancelled=cancelled)

    async def wait(self, seconds: float, *, cancelled: Cancelled = None) -> None:
        await self.member("wait", {"duration": seconds}, cancelled=cancelled)

    async def cursor_position(self, *, cancelled: Cancelled = None) -> Point:
        """Where the pointer is, in screenshot pixels."""
        return await self.member("cursor_position", {}, cancelled=cancelled)

    async def wait_for_window_manager(self, timeout: float = 20.0, *,
                                      cancelled: Cancelled = None) -> bool:
        """Waits until a window manager manages the display (launch applications after it)."""
        return await self._native.wait_for_window_manager(timeout, cancelled, False)

    async def wait_for_window(self, timeout: float = 20.0, *, cancelled: Cancelled = None) -> bool:
        """Waits until a window is on screen (the bare root is uniform); whether one appeared."""
        return await self._native.wait_for_window(timeout, cancelled, False)

    async def __aenter__(self) -> "Desktop":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __enter__(self) -> "Desktop":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SyncDesktop(_DesktopBase):
    """:class:`Desktop` with blocking methods (the GIL is released while an action runs; Ctrl-C
    cancels it). Exported as ``hands.sync.Desktop``."""

    def member(self, name: str, input: Dict[str, Any], *, cancelled: Cancelled = None) -> Any:
        """Runs one of Claude's computer toolset members by name, with its input object."""
        return self._native.member(name, json.dumps(input), cancelled, True)

    def screenshot(self, *, cancelled: Cancelled = None) -> Image:
        return self.member("screenshot", {}, cancelled=cancelled)

    def zoom(self, region: Sequence[int], *, cancelled: Cancelled = None) -> Image:
        return self.member("zoom", {"region": list(region)}, cancelled=cancelled)

    def click(self, x: Optional[int] = None, y: Optional[int] = None, *, button: str = "left",
              count: int = 1, modifiers: Union[str, Sequence[str], None] = None,
              cancelled: Cancelled = None) -> None:
        self.member(*_click(x, y, button, count, modifiers), cancelled=cancelled)

    def move(self, x: int, y: int, *, cancelled: Cancelled = None) -> None:
        self.member("mouse_move", {"coordinate": [x, y]}, cancelled=cancelled)

    def mouse_down(self, *, cancelled: Cancelled = None) -> None:
        self.member("left_mouse_down", {}, cancelled=cancelled)

    def mouse_up(self, *, cancelled: Cancelled = None) -> None:
        self.member("left_mouse_up", {}, cancelled=cancelled)

    def drag(self, start: Point, end: Point, *, modifiers: Union[str, Sequence[str], None] = None,
             cancelled: Cancelled = None) -> None:
        self.member(*_drag(start, end, modifiers), cancelled=cancelled)

    def scroll(self, direction: str, amount: int = 3, *, at: Optional[Point] = None,
               modifiers: Union[str, Sequence[str], None] = None, cancelled: Cancelled = None) -> None:
        self.member(*_scroll(direction, amount, at, modifiers), cancelled=cancelled)

    def type(self, text: str, *, cancelled: Cancelled = None) -> None:
        self.member("type", {"text": text}, cancelled=cancelled)

    def key(self, keys: str, *, repeat: int = 1, cancelled: Cancelled = None) -> None:
        self.member(*_key(keys, repeat), cancelled=cancelled)

    def hold_key(self, keys: str, seconds: float, *, cancelled: Cancelled = None) -> None:
        self.member("hold_key", {"text": keys, "duration": seconds}, cancelled=cancelled)

    def wait(self, seconds: float, *, cancelled: Cancelled = None) -> None:
        self.member("wait", {"duration": seconds}, cancelled=cancelled)

    def cursor_position(self, *, cancelled: Cancelled = None) -> Point:
        return self.member("cursor_position", {}, cancelled=cancelled)

    def wait_for_window_manager(self, timeout: float = 20.0, *,
                                cancelled: Cancelled = None) -> bool:
        """Waits until a window manager manages the display (launch applications after it)."""
        return self._native.wait_for_window_manager(timeout, cancelled, True)

    def wait_for_window(self, timeout: float = 20.0, *, cancelled: Cancelled = None) -> bool:
        return self._native.wait_for_window(timeout, cancelled, True)

    def __enter__(self) -> "SyncDesktop":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
