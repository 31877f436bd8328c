"""hands: fast, safe drivers for a real Linux desktop and a real Chromium, for Python agents.

- :class:`Desktop` spawns a private Xvfb display (or attaches to one) and drives it with XTEST
  input and MIT-SHM capture from one persistent connection, waits for the screen to settle by
  XDamage events instead of sleeping, and sizes screenshots for the model, mapping its
  coordinates back to the screen exactly.
- :class:`Browser` launches Debian's Chromium on a fresh profile (or attaches to one) over the
  DevTools Protocol: structured reads with refs re-checked before every action, an origin
  allow-list enforced inside the browser on every request, file transfers only by grant.

Both are async (``await desktop.click(10, 20)``); :mod:`hands.sync` has the same classes with
blocking methods. :mod:`hands.openai` and :mod:`hands.anthropic` plug them into the official
SDKs' computer and browser toolsets and tool runners.
"""

from __future__ import annotations

from . import errors
from ._browser import Browser
from ._desktop import Client, Desktop
from ._hands import Image, __version__
from .errors import (
    ActionError,
    ArgumentError,
    BrowserError,
    BrowserFailed,
    BrowserGone,
    BrowserRefused,
    CancelledError,
    DesktopError,
    DesktopGone,
    HandsError,
    StartError,
)

__all__ = [
    "Desktop",
    "Browser",
    "Client",
    "Image",
    "errors",
    "HandsError",
    "CancelledError",
    "StartError",
    "ArgumentError",
    "DesktopError",
    "DesktopGone",
    "ActionError",
    "BrowserError",
    "BrowserRefused",
    "BrowserFailed",
    "BrowserGone",
    "__version__",
]
