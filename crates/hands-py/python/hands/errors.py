"""The exceptions hands raises, by what the caller should do about them.

The native module raises these classes too, so one ``except`` clause covers both. The SDK
adapters (``hands.openai``, ``hands.anthropic``) translate them into the exceptions each SDK
understands: a recoverable failure becomes openai's ``BrowserError`` or anthropic's ``ToolError``
(text the model reads), a broken driver stops the run.
"""

from __future__ import annotations

__all__ = [
    "HandsError",
    "CancelledError",
    "StartError",
    "SandboxUnavailable",
    "ArgumentError",
    "DesktopError",
    "DesktopGone",
    "ActionError",
    "BrowserError",
    "BrowserRefused",
    "BrowserFailed",
    "BrowserGone",
    "StateError",
]


class HandsError(Exception):
    """Every error hands raises."""


class CancelledError(HandsError):
    """The operation was cancelled (its ``cancelled`` callable answered true) before it finished."""


class StartError(HandsError):
    """Xvfb, Chromium, the display connection or a program could not be started."""


class SandboxUnavailable(StartError):
    """No jail can be made on this machine for a spawned desktop or a launched browser
    (bubblewrap missing, user namespaces blocked, the jail's init not found). The message says
    what to do; ``sandbox="none"`` runs on the host, as the caller, on purpose."""


class ArgumentError(HandsError, ValueError):
    """An argument is invalid; the message names it and is safe to show a model."""


class DesktopError(HandsError):
    """A desktop failure."""


class DesktopGone(DesktopError):
    """The display or its connection is gone (or the desktop was closed): stop the run."""


class ActionError(DesktopError):
    """One desktop action failed; the message is safe to show a model."""


class BrowserError(HandsError):
    """A browser failure."""


class BrowserRefused(BrowserError):
    """A recoverable browser failure (a stale ref, a blocked navigation, a timeout) whose message
    is safe to show a model."""


class BrowserFailed(BrowserError):
    """Any other browser failure; its message may hold details a model should not see."""


class BrowserGone(BrowserError):
    """The browser or its connection is gone (or the session was closed): stop the run."""


class StateError(HandsError):
    """A saved sign-in (``state=``) could not be opened or saved: no key in ``HANDS_STATE_KEY``,
    a wrong key (``"wrong state key"``), a file changed after it was saved, a bad name. The
    message says what to do."""
