"""openai's own ResponsesToolRunner on hands' drivers, against the API stand-in, completing both
drills: the note in mousepad on Xvfb (computer driver) and the booking in Chromium (browser
driver). The SDK validates every driver result (a screenshot's shape, a read's fields, the
state's tabs) and would fail the action or stop the run on any it rejects; every action's
diagnostic record must say it completed."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List

from conftest import API_KEY, BOOKING, assert_booked, assert_clean, saved_note
from openai import AsyncOpenAI, OpenAI
from openai.lib.browser import AsyncBrowserToolset, BrowserToolset
from openai.lib.computer import AsyncComputerToolset, ComputerToolset
from openai.lib.responses_tool_runner import AsyncResponsesToolRunner, ResponsesToolRunner
from policies import booking, note_openai

import hands
import hands.sync
from hands.openai import AsyncBrowserDriver, AsyncComputerDriver, BrowserDriver, ComputerDriver, url_policy
from hands.testing import Sim


def actions(records: List[Dict[str, Any]], api: str) -> List[Dict[str, Any]]:
    return [r for r in records if r["api"] == api and r["stage"] == "action"]


def final_text(response: Any) -> str:
    return " ".join(part.text for item in response.output if item.type == "message" for part in item.content)


def test_responses_runner_writes_the_note_with_the_computer_driver(note_desktop):
    desktop, task = note_desktop
    records: List[Dict[str, Any]] = []
    with Sim(note_openai(task)) as sim:
        client = OpenAI(api_key=API_KEY, base_url=sim.openai_base_url, max_retries=0)
        runner = ResponsesToolRunner(computer=ComputerToolset(ComputerDriver(desktop)))
        response = runner.run(client, {"model": "computer-use-2", "input": task.prompt()},
                              max_steps=8, approve_safety_checks=lambda call: True,
                              on_diagnostic=records.append)
        assert_clean(sim)
        outputs = [i for r in sim.requests() for i in r["body"].get("input", [])
                   if i.get("type") == "computer_call_output"]
    assert "saved" in final_text(response)
    assert saved_note(task) == task.note
    done = actions(records, "computer")
    # 4 calls of 0 + 4 + 3 + 2 actions (a `screenshot` action is the call's closing screenshot),
    # and each call's closing screenshot.
    assert len(done) == 13 and all(r["reason"] == "completed" for r in done), done
    assert all(o["output"]["image_url"].startswith("data:image/png;base64,") for o in outputs)


def test_responses_runner_books_the_room_with_the_browser_driver(booking_app, booking_browser):
    records: List[Dict[str, Any]] = []
    approvals: List[str] = []

    def confirm(context: Dict[str, Any]) -> bool:
        approvals.append(context["member"])
        return True

    with Sim(booking(BOOKING)) as sim:
        client = OpenAI(api_key=API_KEY, base_url=sim.openai_base_url, max_retries=0)
        toolset = BrowserToolset(BrowserDriver(booking_browser), confirm=confirm,
                                 url_policy=url_policy(booking_browser))
        runner = ResponsesToolRunner(browser=toolset)
        response = runner.run(client, {"model": "gpt-browser-drill", "input": BOOKING.prompt()},
                              max_steps=6, on_diagnostic=records.append)
        assert_clean(sim)
        outputs = [json.loads(i["output"][0]["text"]) for r in sim.requests()[-1:]
                   for i in r["body"]["input"] if i.get("type") == "function_call_output"]
    assert final_text(response) == "The booking is confirmed."
    assert_booked(booking_app, sim)
    done = actions(records, "browser")
    assert len(done) == 9 and all(r["reason"] == "completed" for r in done), done
    # Every output the model got is ok, with the state the SDK validated: the app's origin only.
    assert all(o["ok"] for o in outputs)
    assert outputs[0]["result"]["version"] == 1 and outputs[0]["result"]["elements"]
    assert {t["url"] for o in outputs for t in o["state"]["tabs"]} == {booking_app.base_url}
    assert approvals.count("type") == 4 and approvals.count("click") == 2


def test_async_runner_books_the_room_with_the_async_browser_driver(booking_app):
    async def run() -> Any:
        browser = await hands.Browser.launch(allow=[booking_app.base_url])
        try:
            await browser.navigate(booking_app.base_url + "/")
            with Sim(booking(BOOKING)) as sim:
                client = AsyncOpenAI(api_key=API_KEY, base_url=sim.openai_base_url, max_retries=0)

                async def confirm(context: Dict[str, Any]) -> bool:
                    return True

                async def allowed(context: Dict[str, Any], url: str) -> bool:
                    return browser.allows(url)

                toolset = AsyncBrowserToolset(AsyncBrowserDriver(browser), confirm=confirm, url_policy=allowed)
                response = await AsyncResponsesToolRunner(browser=toolset).run(
                    client, {"model": "gpt-browser-drill", "input": BOOKING.prompt()}, max_steps=6)
                assert_clean(sim)
                return response, sim
        finally:
            browser.close()

    response, sim = asyncio.run(run())
    assert final_text(response) == "The booking is confirmed."
    assert_booked(booking_app, sim)


def test_async_computer_driver_answers_the_sdk(note_desktop):
    """The async computer driver through the SDK's AsyncComputerToolset, one call."""
    desktop, _ = note_desktop

    async def run() -> Dict[str, Any]:
        from openai.types.responses import ResponseComputerToolCall

        call = ResponseComputerToolCall.model_validate({
            "id": "cu_1", "call_id": "call_1", "type": "computer_call", "status": "completed",
            "pending_safety_checks": [], "actions": [{"type": "move", "x": 10, "y": 10}, {"type": "screenshot"}]})
        return await AsyncComputerToolset(AsyncComputerDriver(desktop)).execute(call)

    output = asyncio.run(run())
    assert output["type"] == "computer_call_output" and output["call_id"] == "call_1"
    assert output["output"]["image_url"].startswith("data:image/png;base64,")
    assert desktop.cursor_position() == (10, 10)
