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

Both run their programs in a jail by default (``sandbox="jail"``): a spawned desktop (Xvfb, the
apps :meth:`Desktop.launch` starts) in a desktop jail whose only way out is a proxy allowing the
origins of ``allow=[...]`` (nothing without it), a launched Chromium in a browser jail of its
own. A jail is bubblewrap with every namespace unshared, no capabilities, a seccomp filter, an
empty network namespace, a private filesystem, its own uid and limits; its first program is
``hands-jail-init``, shipped inside this package (``$HANDS_JAIL_INIT`` overrides it). Where no
jail can be made, :class:`SandboxUnavailable` says why and what to do; ``sandbox="none"`` runs
on the host, as the caller, on purpose.
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
    SandboxUnavailable,
    StartError,
    StateError,
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
    "SandboxUnavailable",
    "ArgumentError",
    "DesktopError",
    "DesktopGone",
    "ActionError",
    "BrowserError",
    "StateError",
    "BrowserRefused",
    "BrowserFailed",
    "BrowserGone",
    "__version__",
]
