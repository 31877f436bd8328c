"""anthropic's own tool runner (``client.beta.messages.tool_runner``) on hands' toolsets, against
the API stand-in, completing both drills: the note in mousepad on Xvfb (computer toolset) and
the booking in Chromium (browser toolset). The SDK parses every member's input, renders every
result (images, acknowledgements, the ``browser_state`` block) and would answer the model with an
``is_error`` result for any it rejected: no tool result may be an error, and the stand-in must
accept every request as the real API would."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

from anthropic import Anthropic, AsyncAnthropic
from conftest import API_KEY, BOOKING, UPLOAD_PAGE, assert_booked, assert_clean, saved_note
from policies import booking, note_anthropic, text, toolset_use

import hands
import hands.sync
from hands.anthropic import AsyncBrowserToolset, BrowserToolset, ComputerToolset
from hands.testing import Sim


def client_options(sim: Sim) -> Dict[str, Any]:
    """The SDK's defaults (its key as `Authorization: Bearer`, server-held threads), without
    retries."""
    return {"api_key": API_KEY, "base_url": sim.anthropic_base_url, "max_retries": 0}


def tool_results(sim: Sim) -> List[Dict[str, Any]]:
    """Every tool result the runner sent, from the whole conversation of the last request (the
    runner continues a server-held thread, so its body holds only the newest turn)."""
    last = sim.requests()[-1]
    messages = last["thread_conversation"] or last["body"]["messages"]
    return [b for m in messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def assert_threaded(sim: Sim) -> None:
    """The runner held its conversation on the server: the first request created the thread,
    every later one continued it with only its new turn."""
    bodies = [r["body"] for r in sim.requests()]
    assert bodies[0]["thread"] == {"type": "create"}
    assert len(bodies) > 1 and all(b["thread"]["type"] == "continue" for b in bodies[1:])
    assert all("tools" not in b and len(b["messages"]) == 1 for b in bodies[1:])


def final_text(message: Any) -> str:
    return " ".join(block.text for block in message.content if block.type == "text")


def test_tool_runner_writes_the_note_with_the_computer_toolset(note_desktop):
    desktop, task = note_desktop
    confirmed: List[str] = []

    def confirm(context: Any) -> bool:
        confirmed.append(context.member)
        return True

    with Sim(note_anthropic(task)) as sim:
        client = Anthropic(**client_options(sim))
        runner = client.beta.messages.tool_runner(
            model="claude-opus-5", max_tokens=4096, max_iterations=8,
            tools=[ComputerToolset(desktop, confirm=confirm)],
            messages=[{"role": "user", "content": task.prompt()}])
        message = runner.until_done()
        assert_clean(sim)
        assert_threaded(sim)
        results = tool_results(sim)
    assert "saved" in final_text(message)
    assert saved_note(task) == task.note
    # 1 + 5 + 3 + 4 member calls, each answered, none an error, each echoing the toolset.
    assert len(results) == 13
    assert not any(r.get("is_error") for r in results), [r for r in results if r.get("is_error")]
    assert all(r.get("toolset_name") == "computer" for r in results)
    images = [c for r in results for c in r["content"] if c["type"] == "image"]
    assert len(images) == 4 and all(i["source"]["media_type"] == "image/png" for i in images)
    assert confirmed.count("type") == 2 and confirmed.count("key") == 3


def test_tool_runner_books_the_room_with_the_browser_toolset(booking_app, booking_browser):
    with Sim(booking(BOOKING)) as sim:
        client = Anthropic(**client_options(sim))
        runner = client.beta.messages.tool_runner(
            model="claude-opus-5", max_tokens=4096, max_iterations=6,
            tools=[BrowserToolset(booking_browser, confirm=lambda context: True)],
            messages=[{"role": "user", "content": BOOKING.prompt()}])
        message = runner.until_done()
        assert_clean(sim)
        assert_threaded(sim)
        results = tool_results(sim)
    assert final_text(message) == "The booking is confirmed."
    assert_booked(booking_app, sim)
    assert len(results) == 9
    assert not any(r.get("is_error") for r in results), [r for r in results if r.get("is_error")]
    states = [c for r in results for c in r["content"] if c["type"] == "browser_state"]
    assert states and all(t["url"] == booking_app.base_url for s in states for t in s["tabs"])


def test_async_tool_runner_books_the_room_with_the_async_browser_toolset(booking_app):
    async def run() -> Any:
        browser = await hands.Browser.launch(allow=[booking_app.base_url])
        try:
            await browser.navigate(booking_app.base_url + "/")
            with Sim(booking(BOOKING)) as sim:
                client = AsyncAnthropic(**client_options(sim))
                runner = client.beta.messages.tool_runner(
                    model="claude-opus-5", max_tokens=4096, max_iterations=6,
                    tools=[AsyncBrowserToolset(browser, confirm=lambda context: True)],
                    messages=[{"role": "user", "content": BOOKING.prompt()}])
                message = await runner.until_done()
                assert_clean(sim)
                return message, sim
        finally:
            browser.close()

    message, sim = asyncio.run(run())
    assert final_text(message) == "The booking is confirmed."
    assert_booked(booking_app, sim)


def test_pointer_members_arrive_in_the_sdks_shapes(booking_app, booking_browser):
    """anthropic 2.10's coordinate targets (``{"type": "coordinate", "x", "y"}``, ``from`` of a
    drag, the ``target`` of ``mouse_move`` and ``scroll``) reach hands' parser unchanged and
    run."""
    at = {"type": "coordinate", "x": 900, "y": 700}
    turns = iter([
        {"blocks": [text("Pointer work."),
                    toolset_use("browser", "mouse_move", {"target": at}),
                    toolset_use("browser", "hover", {"target": at}),
                    toolset_use("browser", "left_click", {"target": at}),
                    toolset_use("browser", "double_click", {"target": at, "modifiers": "shift"}),
                    toolset_use("browser", "scroll", {"scroll_direction": "down", "target": at}),
                    toolset_use("browser", "left_click_drag",
                                {"from": at, "target": {"type": "coordinate", "x": 950, "y": 700}})]},
        {"text": "Done."}])
    with Sim(lambda request: next(turns)) as sim:
        client = Anthropic(**client_options(sim))
        runner = client.beta.messages.tool_runner(
            model="claude-opus-5", max_tokens=1024, max_iterations=3,
            tools=[BrowserToolset(booking_browser, confirm=lambda context: True)],
            messages=[{"role": "user", "content": "Move around."}])
        runner.until_done()
        assert_clean(sim)
        results = tool_results(sim)
    assert len(results) == 6
    assert not any(r.get("is_error") for r in results), [r for r in results if r.get("is_error")]
    texts = [c["text"] for r in results for c in r["content"] if c["type"] == "text"]
    assert "Scrolled down." in texts and "Dragged." in texts


def test_file_upload_redeems_a_grant_named_in_document_ids(tmp_path):
    """``file_upload`` in the SDK's shape: the grant's id in ``document_ids`` fills the file input
    the ``target`` ref names, once; a used grant and a path are refused (the model reads why)."""
    attachment = tmp_path / "grant.txt"
    attachment.write_text("hello grant")
    # Jailed (the default): the granted host file is staged into the browser's jail.
    browser = hands.sync.Browser.launch()
    try:
        browser.navigate(UPLOAD_PAGE)
        [field] = browser.read_page("interactive")["elements"]
        browser.grant_upload("g1", str(attachment))
        target = {"type": "ref", "ref": field["ref"]}
        turns = iter([
            {"blocks": [toolset_use("browser", "file_upload", {"target": target, "document_ids": ["g1"]})]},
            {"blocks": [toolset_use("browser", "file_upload", {"target": target, "document_ids": ["g1"]})]},
            {"blocks": [toolset_use("browser", "file_upload", {"target": target, "paths": [str(attachment)]})]},
            {"text": "Done."}])
        confirmed: List[Any] = []

        def confirm(context: Any) -> bool:
            confirmed.append((context.member, list(context.input.document_ids or [])))
            return True

        with Sim(lambda request: next(turns)) as sim:
            client = Anthropic(**client_options(sim))
            runner = client.beta.messages.tool_runner(
                model="claude-opus-5", max_tokens=1024, max_iterations=5,
                tools=[BrowserToolset(browser, confirm=confirm, configs={"file_upload": {"enabled": True}})],
                messages=[{"role": "user", "content": "Attach the file."}])
            runner.until_done()
            assert_clean(sim)
            results = tool_results(sim)
        assert browser.get_page_text()["text"].endswith("grant.txt:11")
    finally:
        browser.close()
    assert [r.get("is_error", False) for r in results] == [False, True, True]
    texts = [c["text"] for r in results for c in (r["content"] if isinstance(r["content"], list)
                                                 else [{"text": r["content"]}]) if "text" in c]
    assert any("did not complete" in t and "refused" in t for t in texts), texts
    assert any("takes no paths" in t for t in texts), texts
    # Asked before each upload that ran; the path was refused before confirm.
    assert confirmed == [("file_upload", ["g1"]), ("file_upload", ["g1"])]
