"""The SDK side's fake drivers: subclasses and drivers of the official SDKs' own toolsets that record
which call reached them and answer as a minimal real driver of the suite's fixture would.

A fake never checks what the SDK leaves to the driver on purpose (screen bounds, key names): it
records and succeeds, so the suite sees exactly what the SDK itself lets through. What a real
driver cannot do at all in the suite's world it refuses as a real one would: a ref no read issued,
a tab that is not open, a URL off the local fixture server (the machine has no network).
"""

from __future__ import annotations

import base64
import struct
import zlib
import functools
from typing import Any
from urllib.parse import urlsplit

SCREEN = (1280, 800)
"""The desktop every computer case sees (hands' Xvfb has the same size)."""

VIEWPORT = (1280, 800)

FIXTURE_ELEMENTS = [
    {"label": "Name", "role": "textbox", "value": ""},
    {"label": "Agree", "role": "checkbox", "checked": False},
    {"label": "Colour", "role": "combobox", "value": "r",
     "options": [{"label": "Red", "value": "r"}, {"label": "Green", "value": "g"}, {"label": "Blue", "value": "b"}]},
    {"label": "Submit", "role": "button"},
    {"label": "Back home", "role": "button"},
]
"""The controls of the fixture pages (`fixtures/form.html`, `fixtures/page2.html`), by label."""


PAGE_PHRASES = {"Difftest form", "Submit", "Name", "Agree", "Colour", "Bottom of the page"}
"""Texts visible on the fixture form, for `wait_for`."""


def ref_of(label: str) -> str:
    return "ref_" + label.replace(" ", "_")


KNOWN_REFS = {ref_of(e["label"]) for e in FIXTURE_ELEMENTS}


def resolve(value: Any) -> Any:
    """The case with its placeholders resolved as the fake drivers know them (hands' side resolves
    them against the real page): `$ref:<label>` is that control's ref, `$tab:0` the start tab."""
    if isinstance(value, str):
        if value.startswith("$ref:"):
            label = value[5:]
            return ref_of(label) if ref_of(label) in KNOWN_REFS else "ref_missing"
        if value == "$tab:0":
            return "tab-0"
        if '"$ref:' in value or '"$tab:0"' in value:  # JSON text of function arguments
            out = value.replace('"$tab:0"', '"tab-0"')
            for element in FIXTURE_ELEMENTS:
                out = out.replace(f'"$ref:{element["label"]}"', f'"{ref_of(element["label"])}"')
            while '"$ref:' in out:
                start = out.index('"$ref:')
                end = out.find('"', start + 1)
                end = len(out) if end < 0 else end + 1
                out = out[:start] + '"ref_missing"' + out[end:]
            return out
        return value
    if isinstance(value, list):
        return [resolve(v) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v) for k, v in value.items()}
    return value


@functools.lru_cache(maxsize=None)
def png_b64(width: int, height: int) -> str:
    """A real white PNG of the given size, base64."""
    raw = b"".join(b"\x00" + b"\xff" * (width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def reachable(url: str, base: str) -> bool:
    """Whether a real browser in the suite could open `url`: only the local fixture server and
    `about:blank` answer (the machine has no network)."""
    if url == "about:blank":
        return True
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and f"{parts.scheme}://{parts.netloc}" == base
    except ValueError:
        return False


class Tabs:
    """The fake browser's tabs: ids `tab-0`, `tab-1`, …, exactly one active."""

    def __init__(self, start_url: str) -> None:
        self.tabs = [{"tab_id": "tab-0", "title": title_of(start_url), "url": start_url, "active": True}]
        self.next = 1
        self.changes: list[dict] = []

    def find(self, tab_id: str | None) -> dict | None:
        if not tab_id:
            return self.active()
        return next((t for t in self.tabs if t["tab_id"] == tab_id), None)

    def active(self) -> dict | None:
        return next((t for t in self.tabs if t["active"]), None)

    def open(self, url: str = "about:blank") -> dict:
        for tab in self.tabs:
            tab["active"] = False
        tab = {"tab_id": f"tab-{self.next}", "title": title_of(url), "url": url, "active": True}
        self.next += 1
        self.tabs.append(tab)
        self.changes.append({"type": "tab_opened", "tab_id": tab["tab_id"]})
        return tab

    def switch(self, tab_id: str) -> dict | None:
        tab = self.find(tab_id)
        if tab is None:
            return None
        for t in self.tabs:
            t["active"] = t is tab
        return tab

    def close(self, tab_id: str) -> bool:
        tab = self.find(tab_id)
        if tab is None:
            return False
        self.tabs.remove(tab)
        if tab["active"] and self.tabs:
            self.tabs[-1]["active"] = True
        self.changes.append({"type": "tab_closed", "tab_id": tab["tab_id"]})
        return True


def title_of(url: str) -> str:
    if url.endswith("/page2.html"):
        return "Second page"
    if url.endswith("/form.html"):
        return "Difftest form"
    return ""


def read_text() -> str:
    lines = ["Difftest form"]
    for element in FIXTURE_ELEMENTS[:4]:
        lines.append(f"[{ref_of(element['label'])}] {element['role']} \"{element['label']}\"")
    return "\n".join(lines)


def read_report(with_elements: bool = True) -> dict:
    """A `BrowserReadV1` of the fixture."""
    elements = []
    if with_elements:
        for element in FIXTURE_ELEMENTS[:4]:
            entry = {"ref": ref_of(element["label"]), "role": element["role"], "label": element["label"]}
            for key in ("value", "checked", "options"):
                if key in element:
                    entry[key] = element[key]
            elements.append(entry)
    return {"version": 1, "text": "Difftest form", "elements": elements, "omitted": []}
