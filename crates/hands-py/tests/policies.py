"""The scripted "models" of the drills, as policies of the API stand-in (the idea of hands'
Rust drills, crates/hands/src/drill/*_policy.rs): each decides its next turn only from the
request the SDK sent — what a model would see — and the test then verifies the outcome itself
(the file on disk, the row in the app's database), never the policy's claim."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

Turn = Dict[str, Any]
Policy = Callable[[Dict[str, Any]], Turn]


def text(words: str) -> Dict[str, Any]:
    return {"type": "text", "text": words}


def toolset_use(toolset: str, member: str, input: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "tool_use", "name": member, "toolset_name": toolset, "input": input}


def message(words: str) -> Dict[str, Any]:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": words, "annotations": []}]}


def computer_call(actions: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"type": "computer_call", "actions": actions, "pending_safety_checks": []}


def function_call(name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}


def tool_results(request: Dict[str, Any]) -> Tuple[List[str], Optional[str]]:
    """The texts of the newest tool results of a request (either API) and the first failure
    among them (an ``is_error`` result, or a function output with ``"ok": false``)."""
    texts: List[str] = []
    failure: Optional[str] = None
    messages = request.get("messages")
    if messages is not None:
        last = messages[-1] if messages else {}
        content = last.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") != "tool_result":
                continue
            parts = block.get("content")
            found = [parts] if isinstance(parts, str) else [
                p.get("text", "") for p in parts or [] if p.get("type") == "text"]
            texts.extend(found)
            if block.get("is_error") and failure is None:
                failure = " ".join(found)
        return texts, failure
    # The Responses runner sends the whole history: the outputs after the last assistant item.
    items = request.get("input", [])
    tail: List[Dict[str, Any]] = []
    for item in reversed(items):
        if item.get("type") in ("function_call_output", "computer_call_output"):
            tail.append(item)
        elif tail:
            break
    for item in reversed(tail):
        output = item.get("output")
        if item.get("type") != "function_call_output":
            continue
        parts = [output] if isinstance(output, str) else [p.get("text", "") for p in output or []
                                                          if p.get("type") == "input_text"]
        for part in parts:
            texts.append(part)
            try:
                payload = json.loads(part)
            except ValueError:
                continue
            if payload.get("ok") is False and failure is None:
                failure = str(payload.get("error"))
    return texts, failure


# --- the note drill (mousepad) ------------------------------------------------------------


@dataclass
class NoteTask:
    note: str
    #: Where the editor saves it, as the editor sees it (inside the desktop's jail).
    path: str
    editor_point: Tuple[int, int]
    #: The same file as the test sees it, on the host.
    host_path: str

    def prompt(self) -> str:
        return f"In the text editor on screen, write this note exactly:\n{self.note}\nthen save it as {self.path}."


def note_anthropic(task: NoteTask) -> Policy:
    """Claude's computer toolset members, one decision per turn."""

    def policy(request: Dict[str, Any]) -> Turn:
        _, failure = tool_results(request)
        if failure is not None:
            return {"text": f"I could not finish: an action failed ({failure})."}
        step = sum(1 for m in request["messages"] if m["role"] == "assistant")
        x, y = task.editor_point

        def c(member: str, input: Dict[str, Any]) -> Dict[str, Any]:
            return toolset_use("computer", member, input)

        if step == 0:
            return {"blocks": [text("I'll look at the screen first."), c("screenshot", {})]}
        if step == 1:
            return {"blocks": [text("The editor is open. I'll write the note and open the save dialog."),
                               c("left_click", {"coordinate": [x, y]}), c("type", {"text": task.note}),
                               c("key", {"text": "ctrl+s"}), c("wait", {"duration": 1}), c("screenshot", {})]}
        if step == 2:
            return {"blocks": [text("The save dialog is open with the name field focused."),
                               c("key", {"text": "ctrl+a"}), c("type", {"text": task.path}), c("screenshot", {})]}
        if step == 3:
            # GTK's file chooser ignores Return for a moment after a path is typed.
            return {"blocks": [c("wait", {"duration": 1}), c("key", {"text": "Return"}),
                               c("wait", {"duration": 1}), c("screenshot", {})]}
        return {"text": f"The note is saved as {task.path}."}

    return policy


def note_openai(task: NoteTask) -> Policy:
    """OpenAI ``computer_call`` batches, one per turn; the step is the number of calls answered."""

    def policy(request: Dict[str, Any]) -> Turn:
        step = sum(1 for item in request.get("input", []) if item.get("type") == "computer_call_output")
        x, y = task.editor_point
        if step == 0:
            return {"items": [computer_call([{"type": "screenshot"}])]}
        if step == 1:
            return {"items": [computer_call([
                {"type": "click", "button": "left", "x": x, "y": y},
                {"type": "type", "text": task.note},
                {"type": "keypress", "keys": ["CTRL", "S"]},
                {"type": "wait"}])]}
        if step == 2:
            return {"items": [computer_call([
                {"type": "keypress", "keys": ["CTRL", "A"]},
                {"type": "type", "text": task.path},
                {"type": "wait"}])]}
        if step == 3:
            return {"items": [computer_call([{"type": "keypress", "keys": ["ENTER"]}, {"type": "wait"}])]}
        return {"items": [message(f"The note is saved as {task.path}.")]}

    return policy


# --- the booking drill (Harbour Hotel) ----------------------------------------------------


@dataclass
class BookingTask:
    name: str
    email: str
    check_in: str
    nights: int
    room: str
    breakfast: bool

    def prompt(self) -> str:
        return (f"Book a room on the open page for {self.name} ({self.email}), checking in on "
                f"{self.check_in} for {self.nights} nights, room type {self.room}, "
                f"{'with' if self.breakfast else 'without'} breakfast. Confirm the booking is saved.")


#: The labels of the form's controls, in the order their refs are used.
LABELS = ["Full name", "Email", "Check-in", "Nights", "Room type", "Include breakfast", "Book now"]


def _elements(read: Dict[str, Any]) -> Optional[List[Dict[str, Any]]]:
    result = read.get("result")
    if isinstance(result, dict) and isinstance(result.get("elements"), list):
        return result["elements"]
    elements = read.get("elements")
    return elements if isinstance(elements, list) else None


def _ref_of(elements: List[Dict[str, Any]], label: str) -> Optional[str]:
    for element in elements:
        if str(element.get("label", "")).strip().lower().startswith(label.lower()):
            return element.get("ref")
    return None


def booking(task: BookingTask) -> Policy:
    """Reads the page, finds each field's ref by its label in the structured read, fills the
    form, submits it, and reads the confirmation — for either API (Claude's browser toolset on
    Messages, the driver contract's function tools on Responses)."""
    state = {"step": "read"}

    def policy(request: Dict[str, Any]) -> Turn:
        anthropic = "messages" in request

        def finish(words: str) -> Turn:
            return {"text": words} if anthropic else {"items": [message(words)]}

        results, failure = tool_results(request)
        if failure is not None:
            return finish(f"A browser call failed, so I stop: {failure}")
        step = state["step"]
        if step == "read":
            state["step"] = "fill"
            if anthropic:
                return {"blocks": [text("Reading the page."),
                                   toolset_use("browser", "read_page", {"filter": "interactive"})]}
            return {"items": [function_call("browser_read_page", {"filter": "interactive", "tab_id": None})]}
        if step == "fill":
            elements = None
            for result in results:
                try:
                    elements = _elements(json.loads(result))
                except ValueError:
                    continue
                if elements:
                    break
            if not elements:
                return finish("The page read came back without elements, so I stop.")
            refs = [_ref_of(elements, label) for label in LABELS]
            if any(r is None for r in refs):
                return finish("I could not find every field of the booking form.")
            state["step"] = "confirm"
            if anthropic:
                def b(member: str, input: Dict[str, Any]) -> Dict[str, Any]:
                    return toolset_use("browser", member, input)

                def field(ref: str, value: Any) -> Dict[str, Any]:
                    return b("form_input", {"target": {"type": "ref", "ref": ref}, "value": value})

                return {"blocks": [text("Filling in the booking form."),
                                   field(refs[0], task.name), field(refs[1], task.email),
                                   field(refs[2], task.check_in), field(refs[3], str(task.nights)),
                                   field(refs[4], task.room), field(refs[5], task.breakfast),
                                   b("left_click", {"target": {"type": "ref", "ref": refs[6]}}),
                                   b("get_page_text", {})]}

            def t(ref: str, value: str) -> Dict[str, Any]:
                return function_call("browser_type", {"text": value, "target": ref, "tab_id": None})

            items = [t(refs[0], task.name), t(refs[1], task.email), t(refs[2], task.check_in),
                     t(refs[3], str(task.nights)),
                     function_call("browser_select_option", {"target": refs[4], "values": [task.room], "tab_id": None})]
            if task.breakfast:
                items.append(function_call("browser_click", {"target": refs[5], "tab_id": None}))
            items.append(function_call("browser_click", {"target": refs[6], "tab_id": None}))
            items.append(function_call("browser_get_page_text", {"tab_id": None}))
            return {"items": items}
        if step == "confirm":
            state["step"] = "done"
            confirmed = any("Booking confirmed" in r for r in results)
            return finish("The booking is confirmed." if confirmed else "The confirmation page did not appear.")
        return finish("Done.")

    return policy
