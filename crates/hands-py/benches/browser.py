"""Speed, side by side: the same read-heavy browser task through the openai SDK's
BrowserToolset, once with hands' driver and once with a Playwright-based driver (Playwright's
Python package driving the same Debian Chromium, launched with executable_path=/usr/bin/chromium,
reads as Playwright's ARIA snapshot), on the Harbour Hotel booking app. Prints both and the ratio.

    python crates/hands-py/benches/browser.py [--rounds 3]

Needs a wheel built with the `testing` feature (the booking app) and `pip install playwright`
(no browser download: it drives /usr/bin/chromium). Not a test: run it on a quiet machine with a
release build.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import time
from typing import Any, Dict, List, Optional

from openai.lib.browser import BrowserToolset
from openai.types.responses import ResponseFunctionToolCall
from playwright.sync_api import sync_playwright

import hands.sync
from hands.openai import BrowserDriver
from hands.testing import BookingApp


def task(base: str) -> List[Dict[str, Any]]:
    """20 calls: two navigations, then reads of each page (whole, interactive, text, a search,
    a screenshot), the way a model explores before it acts."""
    calls: List[Dict[str, Any]] = []
    for path in ("/", "/bookings"):
        calls.append({"name": "browser_navigate", "arguments": {"url": base + path, "tab_id": None}})
        calls += [
            {"name": "browser_read_page", "arguments": {"filter": "all", "tab_id": None}},
            {"name": "browser_read_page", "arguments": {"filter": "interactive", "tab_id": None}},
            {"name": "browser_get_page_text", "arguments": {"tab_id": None}},
            {"name": "browser_find", "arguments": {"query": "Book", "tab_id": None}},
            {"name": "browser_read_page", "arguments": {"filter": "all", "tab_id": None}},
            {"name": "browser_get_page_text", "arguments": {"tab_id": None}},
            {"name": "browser_read_page", "arguments": {"filter": "interactive", "tab_id": None}},
            {"name": "browser_find", "arguments": {"query": "room", "tab_id": None}},
            {"name": "browser_screenshot", "arguments": {"tab_id": None}},
        ]
    return calls


class PlaywrightDriver:
    """A driver a Python user would write on Playwright: the SDK's protocol, reads as text."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def state(self) -> Dict[str, Any]:
        return {"tabs": [{"id": "t1", "title": self.page.title(), "url": self.page.url, "active": True}]}

    def navigate(self, action: Dict[str, Any]) -> None:
        self.page.goto(action["url"], wait_until="load")

    def read_page(self, action: Dict[str, Any]) -> str:
        snapshot = self.page.locator("body").aria_snapshot()
        if action["filter"] == "interactive":
            keep = ("button", "link", "textbox", "combobox", "checkbox", "radio", "slider", "listbox")
            snapshot = "\n".join(line for line in snapshot.splitlines() if line.strip(" -").startswith(keep))
        return snapshot

    def get_page_text(self, action: Dict[str, Any]) -> str:
        return self.page.inner_text("body")

    def find(self, action: Dict[str, Any]) -> str:
        matches = self.page.get_by_text(action["query"])
        return "\n".join(matches.all_inner_texts()[:20])

    def screenshot(self, action: Dict[str, Any]) -> Dict[str, Any]:
        image = self.page.screenshot(type="jpeg", quality=80)
        return {"type": "input_image", "image_url": "data:image/jpeg;base64," + base64.b64encode(image).decode()}


def run_task(toolset: BrowserToolset, calls: List[Dict[str, Any]]) -> float:
    started = time.perf_counter()
    for index, item in enumerate(calls):
        call = ResponseFunctionToolCall(type="function_call", call_id=f"call_{index}", name=item["name"],
                                        arguments=json.dumps(item["arguments"]), status="completed")
        output = toolset.execute(call)
        payload = json.loads(output["output"][0]["text"])
        assert payload["ok"], payload
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    times: Dict[str, List[float]] = {"hands": [], "playwright": []}
    yes = lambda *a: True  # noqa: E731
    with BookingApp() as app, sync_playwright() as pw:
        calls = task(app.base_url)
        chromium = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                      args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = chromium.new_page(viewport={"width": 1280, "height": 800})
        browser = hands.sync.Browser.launch(allow=[app.base_url])
        toolsets = {"hands": BrowserToolset(BrowserDriver(browser), confirm=yes, url_policy=yes),
                    "playwright": BrowserToolset(PlaywrightDriver(page), confirm=yes, url_policy=yes)}
        try:
            for name, toolset in toolsets.items():
                run_task(toolset, calls)  # warm-up: first loads, caches, JIT
            for _ in range(args.rounds):
                for name, toolset in toolsets.items():
                    times[name].append(run_task(toolset, calls))
        finally:
            browser.close()
            chromium.close()
    print(f"browser task: {len(calls)} calls (2 navigations, 18 reads) through openai's BrowserToolset, "
          f"median of {args.rounds}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<11} {median:7.3f} s   {median / len(calls) * 1e3:7.1f} ms/call")
    ratio = statistics.median(times["playwright"]) / statistics.median(times["hands"])
    print(f"  hands is {ratio:.2f}x {'faster' if ratio >= 1 else 'slower'}")


if __name__ == "__main__":
    main()
