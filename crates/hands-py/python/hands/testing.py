"""Test support (in wheels built with the ``testing`` feature): the local stand-in of the model
APIs and the Harbour Hotel booking app, for running the SDKs' own runners on hands offline.

:class:`Sim` is hands-sim, a real HTTP server on 127.0.0.1 that speaks the Anthropic Messages
and OpenAI Responses APIs and rejects what the real APIs reject; a Python ``policy`` decides each
turn from the request the SDK sent, the way a scripted model would. Point a client at it with
``base_url=sim.anthropic_base_url`` or ``base_url=sim.openai_base_url``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _hands

__all__ = ["Sim", "BookingApp", "available"]

#: Whether this build of the module has the test support.
available: bool = bool(_hands.HAS_TESTING)

Policy = Callable[[Dict[str, Any]], Dict[str, Any]]


def _native() -> Any:
    if not available:
        raise RuntimeError(
            "this build of hands has no test support: build it with `maturin build --features testing`"
        )
    return _hands.testing


class Sim:
    """The model-API stand-in. ``policy(request) -> turn`` answers each request: ``{"blocks":
    [...]}`` (Anthropic content blocks), ``{"items": [...]}`` (OpenAI output items) or
    ``{"text": "..."}``. The server fills in ids, usage and stop reasons."""

    def __init__(self, policy: Policy) -> None:
        def answer(request: str) -> str:
            return json.dumps(policy(json.loads(request)))

        self._native = _native().Sim(answer)
        self._closed: Optional[Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]] = None

    @property
    def anthropic_base_url(self) -> str:
        return self._native.anthropic_base_url

    @property
    def openai_base_url(self) -> str:
        return self._native.openai_base_url

    def requests(self) -> List[Dict[str, Any]]:
        """Every request so far: path, status, body and the rule it broke (``violation``).
        Still answered after :meth:`close`, with what the server saw."""
        if self._closed is not None:
            return self._closed[0]
        return json.loads(self._native.requests())

    def violations(self) -> List[Dict[str, Any]]:
        """The requests rejected as the real API would reject them."""
        if self._closed is not None:
            return self._closed[1]
        return json.loads(self._native.violations())

    @property
    def policy_errors(self) -> List[str]:
        return list(self._native.policy_errors)

    def close(self) -> None:
        if self._closed is None:
            self._closed = (self.requests(), self.violations())
            self._native.close()

    def __enter__(self) -> "Sim":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BookingApp:
    """The Harbour Hotel booking app on 127.0.0.1 with its own SQLite database."""

    def __init__(self) -> None:
        self._native = _native().Booking()

    @property
    def base_url(self) -> str:
        return self._native.base_url

    @property
    def staff_password(self) -> str:
        """The staff login's password: a secret no request to the model may contain."""
        return self._native.staff_password

    def bookings(self) -> List[Dict[str, Any]]:
        """The saved bookings, read from the database itself."""
        return json.loads(self._native.bookings())

    @property
    def bookings_saved(self) -> int:
        """How many bookings a real form post saved."""
        return self._native.bookings_saved

    def close(self) -> None:
        self._native.close()

    def __enter__(self) -> "BookingApp":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
