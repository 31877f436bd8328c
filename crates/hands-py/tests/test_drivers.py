"""The package's own promises, on real Xvfb and Chromium: cancellation stops a running action
(a ``cancelled`` callable, a cancelled asyncio task), errors reach each SDK as the exception it
understands, the allow-list holds inside the browser, and a broken driver stops a run."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Dict

import pytest
from anthropic import Anthropic
from anthropic.tools import ToolsetUsageError
from conftest import API_KEY, UPLOAD_PAGE
from openai.lib.browser import BrowserError, BrowserToolset
from openai.types.responses import ResponseFunctionToolCall
from policies import text, toolset_use

import hands
import hands.sync
from hands.anthropic import ComputerToolset, DriverFault
from hands.openai import BrowserDriver, url_policy
from hands.testing import Sim


@pytest.fixture
def desktop():
    desktop = hands.sync.Desktop.spawn(640, 480)
    try:
        yield desktop
    finally:
        desktop.close()


def test_a_cancelled_callable_stops_a_long_type(desktop):
    started = time.monotonic()
    with pytest.raises(hands.CancelledError):
        desktop.type("x" * 100_000, cancelled=lambda: time.monotonic() - started > 0.05)
    # 100,000 characters take over a second through XTEST; the cancellation is seen within one
    # poll period and the type stops between characters.
    assert time.monotonic() - started < 0.6


def test_a_cancelled_asyncio_task_stops_a_wait():
    async def run() -> float:
        desktop = hands.Desktop.spawn(640, 480)
        try:
            task = asyncio.ensure_future(desktop.wait(10))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The desktop is free again at once: the wait released its lock.
            await desktop.move(5, 5)
            assert await desktop.cursor_position() == (5, 5)
            return time.monotonic() - started
        finally:
            desktop.close()

    assert asyncio.run(run()) < 1.0


def test_desktop_errors_are_typed(desktop):
    with pytest.raises(hands.ActionError, match="outside the screenshot"):
        desktop.click(640, 10)
    with pytest.raises(hands.ActionError, match="key"):
        desktop.key("ctrl+notakey")
    desktop.close()
    with pytest.raises(hands.DesktopGone):
        desktop.screenshot()


def test_screenshots_are_sized_for_the_model_and_coordinates_scaled():
    desktop = hands.sync.Desktop.spawn(1920, 1080, tier="standard")
    try:
        assert desktop.shot_size == (1430, 804)
        image = desktop.screenshot()
        assert (image.width, image.height) == (1430, 804)
        desktop.move(715, 402)
        assert desktop.cursor_position() == (715, 402)
        # The top-left quarter at full resolution (960x540 screen pixels), scaled up to fit the
        # screenshot size with its own aspect ratio.
        zoomed = desktop.zoom([0, 0, 715, 402])
        assert zoomed.height == 804 and abs(zoomed.width - 1430) <= 1
    finally:
        desktop.close()


def function_call(name: str, arguments: Dict[str, Any]) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", call_id="call_1", name=name,
                                    arguments=json.dumps(arguments), status="completed")


def output_payload(output: Dict[str, Any]) -> Dict[str, Any]:
    return json.loads(output["output"][0]["text"])


def test_openai_sees_recoverable_browser_failures_as_browser_error(booking_app, booking_browser):
    driver = BrowserDriver(booking_browser)
    with pytest.raises(BrowserError, match="blocked"):
        driver.navigate({"url": "https://example.com/", "tab_id": None})
    with pytest.raises(BrowserError):
        driver.click({"target": "e999999", "tab_id": None})
    # Through the SDK's toolset: the model reads hands' text, the run goes on.
    toolset = BrowserToolset(driver, confirm=lambda context: True, url_policy=lambda context, url: True)
    booking_browser.navigate(booking_app.base_url + "/")
    read = output_payload(toolset.execute(function_call("browser_read_page", {"filter": "all", "tab_id": None})))
    assert read["ok"] and read["result"]["version"] == 1
    refs = [e["ref"] for e in read["result"]["elements"]]
    assert len(refs) == len(set(refs)) > 5
    stale = output_payload(toolset.execute(function_call("browser_click", {"target": "e999999", "tab_id": None})))
    assert stale["ok"] is False and stale["error"] != "Browser action failed."


def test_the_allow_list_is_the_url_policy_and_holds_in_the_browser(booking_app, booking_browser):
    policy = url_policy(booking_browser)
    assert policy(None, booking_app.base_url + "/bookings")
    assert not policy(None, booking_app.base_url + ".evil.test/")
    assert not policy(None, "https://example.com/")
    # A page-made request to another origin never leaves the browser.
    script = "fetch('https://example.com/').then(() => 'sent', e => 'blocked: ' + e.name)"
    assert booking_browser.run_script(script).startswith("blocked")


def test_a_broken_desktop_stops_the_anthropic_runner(desktop):
    desktop.close()
    policy_turns = iter([{"blocks": [text("Looking."), toolset_use("computer", "screenshot", {})]},
                         {"text": "Done."}])
    with Sim(lambda request: next(policy_turns)) as sim:
        client = Anthropic(api_key=API_KEY, base_url=sim.anthropic_base_url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-opus-5", max_tokens=1024, max_iterations=3,
            tools=[ComputerToolset(desktop, confirm=lambda context: True)],
            messages=[{"role": "user", "content": "Look at the screen."}])
        with pytest.raises(ToolsetUsageError) as raised:
            runner.until_done()
    assert isinstance(raised.value, DriverFault)
    assert isinstance(raised.value.__cause__, hands.DesktopGone)


def test_file_grants_are_single_use_through_the_sdk(tmp_path):
    """``upload_file`` redeems a caller-issued grant once; an unknown or used grant is refused
    before any effect, with the outcome the SDK validates (``ok`` only when completed)."""
    attachment = tmp_path / "grant.txt"
    attachment.write_text("hello grant")
    # Jailed (the default): the granted host file is staged into the browser's jail.
    browser = hands.sync.Browser.launch()
    try:
        browser.navigate(UPLOAD_PAGE)
        [field] = browser.read_page("interactive")["elements"]
        browser.grant_upload("g1", str(attachment))
        toolset = BrowserToolset(BrowserDriver(browser), confirm=lambda context: True,
                                 url_policy=lambda context, url: True, additional_members=["upload_file"])

        def upload(grant: str) -> Dict[str, Any]:
            return output_payload(toolset.execute(function_call("browser_upload_file", {"grant_id": grant})))

        refused = upload("not-issued")
        assert refused["ok"] is False and refused["result"]["status"] == "refused"
        assert output_payload(toolset.execute(function_call("browser_click", {"target": field["ref"], "tab_id": None})))["ok"]
        done = upload("g1")
        # The staged copy stays until the browser closes (the page may read it later): pending.
        assert done["ok"] and done["result"] == {"version": 1, "status": "completed", "effect": "completed",
                                                 "cleanup": "pending"}
        assert upload("g1")["result"]["status"] == "refused"
        assert browser.get_page_text()["text"].endswith("grant.txt:11")
    finally:
        browser.close()
