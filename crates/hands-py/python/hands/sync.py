"""Blocking versions of :class:`hands.Desktop` and :class:`hands.Browser`, for code without an
event loop (and for the SDKs' synchronous toolsets and runners)::

    from hands.sync import Desktop

    with Desktop.spawn(1280, 800) as desktop:
        desktop.click(100, 200)
        image = desktop.screenshot()
"""

from __future__ import annotations

from ._browser import SyncBrowser as Browser
from ._desktop import SyncDesktop as Desktop

__all__ = ["Desktop", "Browser"]
