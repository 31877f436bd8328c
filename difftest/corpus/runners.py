"""Cases for the runners: the same scripted answers from the stand-in API to the SDK's runner and to
hands' runner, both with a computer (Claude's computer toolset; OpenAI's computer tool). What is
compared: which calls acted, how many requests were sent, how the run ended, and (Claude) which
results were errors."""

from __future__ import annotations

from typing import Any

from . import ids


def tool_use(name: str, data: dict, *, toolset: str | None = "computer", id: str | None = None) -> dict:
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": data}
    if toolset is not None:
        block["toolset_name"] = toolset
    if id is not None:
        block["id"] = id
    return block


def turn(blocks: list[dict], stop: str = "tool_use") -> dict:
    return {"content": blocks, "stop_reason": stop}


def text(words: str = "Done.", stop: str = "end_turn") -> dict:
    return {"content": [{"type": "text", "text": words}], "stop_reason": stop}


def computer_call(actions: list[dict] | None = None, *, id: str | None = None, **fields: Any) -> dict:
    item: dict[str, Any] = {"type": "computer_call", **fields}
    if actions is not None:
        item["actions"] = actions
    if id is not None:
        item["call_id"] = id
    return item


def response(*items: dict, **fields: Any) -> dict:
    return {"output": list(items), **fields}


def message(words: str = "Done.", **fields: Any) -> dict:
    return {"type": "message", "text": words, **fields}


CLICK = {"type": "click", "button": "left", "x": 10, "y": 10}
TYPE = {"type": "type", "text": "hi"}


def cases() -> list[dict]:
    out: list[dict] = []

    def anthropic(kind: str, note: str, script: list[dict], **extra: Any) -> None:
        case_id = ids.case_id("ra", kind, note, script, extra)
        # give each tool_use an id of the case's own, so both sides' answers can be matched
        for t, answer in enumerate(script):
            for b, block in enumerate(answer.get("content", [])):
                if block.get("type") == "tool_use":
                    block.setdefault("id", f"toolu_{case_id}_{t}_{b}")
        out.append({"id": case_id, "surface": "runner_anthropic", "kind": kind, "note": note, "script": script,
                    **extra})

    def openai(kind: str, note: str, script: list[dict], **extra: Any) -> None:
        case_id = ids.case_id("ro", kind, note, script, extra)
        for t, answer in enumerate(script):
            for i, item in enumerate(answer.get("output", [])):
                if item.get("type") in ("computer_call", "function_call"):
                    item.setdefault("call_id", f"call_{case_id}_{t}_{i}")
                    item.setdefault("id", f"cu_{case_id}_{t}_{i}")
        out.append({"id": case_id, "surface": "runner_openai", "kind": kind, "note": note, "script": script, **extra})

    click = lambda: tool_use("left_click", {"coordinate": [10, 10]})  # noqa: E731
    typing = lambda: tool_use("type", {"text": "hi"})  # noqa: E731

    # --- Claude ------------------------------------------------------------------------------------
    anthropic("valid", "one turn of two actions, then an answer", [turn([click(), typing()]), text()])
    anthropic("valid", "two turns, then an answer", [turn([click()]), turn([typing()]), text()])
    anthropic("valid", "an answer at once", [text()])
    anthropic("valid", "a text answer on the last allowed request", [turn([click()]), text()], max_steps=2)
    anthropic("valid", "a text answer on the only allowed request", [text()], max_steps=1)
    for stop in ("max_tokens", "refusal", "model_context_window_exceeded", "end_turn", "stop_sequence",
                 "some_future_reason"):
        anthropic("boundary", f"tool_use blocks under stop_reason {stop}", [turn([click(), typing()], stop), text()])
    anthropic("boundary", "pause_turn: sent back, nothing runs", [turn([click()], "pause_turn"), text()])
    anthropic("boundary", "pause_turn then a tool turn",
              [{"content": [{"type": "text", "text": "thinking"}], "stop_reason": "pause_turn"}, turn([click()]),
               text()])
    anthropic("boundary", "the step limit with calls on the last allowed request",
              [turn([click()]), turn([typing()]), text()], max_steps=2, last_step_calls=True)
    anthropic("boundary", "the step limit of one with calls", [turn([click()]), text()], max_steps=1,
              last_step_calls=True)
    anthropic("hostile", "the second block fails: the third is halted",
              [turn([click(), tool_use("bogus", {}), typing()]), text()])
    anthropic("hostile", "every block fails",
              [turn([tool_use("bogus", {}), tool_use("nope", {})]), text()])
    anthropic("hostile", "a tool_use without toolset_name named like a member",
              [turn([tool_use("left_click", {"coordinate": [1, 1]}, toolset=None), click()]), text()])
    anthropic("hostile", "a tool_use of a toolset the run does not have",
              [turn([tool_use("navigate", {"url": "https://example.com"}, toolset="browser"), click()]), text()])
    anthropic("hostile", "a tool_use of a tool the run does not have",
              [turn([tool_use("bash", {"command": "id"}, toolset=None)]), text()])
    anthropic("hostile", "a computer member named in a custom tool call with actions",
              [turn([tool_use("computer", {"actions": [{"action": "left_click"}]}, toolset=None)]), text()])
    anthropic("boundary", "confirm declines type: the next block is halted",
              [turn([click(), typing(), tool_use("key", {"text": "Return"})]), text()], approve={"deny": ["type"]})
    anthropic("boundary", "confirm declines key",
              [turn([tool_use("key", {"text": "ctrl+s"}), click()]), text()], approve={"deny": ["key"]})
    anthropic("boundary", "confirm declines hold_key",
              [turn([tool_use("hold_key", {"text": "shift", "duration": 0})]), text()], approve={"deny": ["hold_key"]})
    anthropic("boundary", "confirm declines left_click",
              [turn([click(), typing()]), text()], approve={"deny": ["left_click"]})
    anthropic("valid", "a screenshot turn", [turn([tool_use("screenshot", {})]), text()])
    anthropic("hostile", "an empty turn under tool_use", [turn([]), text()])

    # --- OpenAI ------------------------------------------------------------------------------------
    openai("valid", "one call of two actions, then an answer", [response(computer_call([CLICK, TYPE])),
                                                                response(message())])
    openai("valid", "two calls in one response", [response(computer_call([CLICK]), computer_call([TYPE])),
                                                  response(message())])
    openai("valid", "an answer at once", [response(message())])
    openai("valid", "a text answer on the last allowed request",
           [response(computer_call([CLICK])), response(message())], max_steps=2)
    openai("valid", "a text answer on the only allowed request", [response(message())], max_steps=1)
    openai("valid", "a preview call with one action", [response(computer_call(None, action=CLICK)),
                                                       response(message())])
    openai("valid", "a reasoning item before the call",
           [response({"type": "reasoning", "summary": []}, computer_call([CLICK])), response(message())])
    openai("boundary", "a response whose status is incomplete",
           [response(computer_call([CLICK]), status="incomplete"), response(message())])
    openai("boundary", "a response whose status is failed", [response(computer_call([CLICK]), status="failed"),
                                                             response(message())])
    openai("boundary", "a call whose status is incomplete",
           [response(computer_call([CLICK], status="incomplete")), response(message())])
    openai("boundary", "a call whose status is in_progress",
           [response(computer_call([CLICK], status="in_progress")), response(message())])
    openai("boundary", "a call on the last allowed request", [response(computer_call([CLICK])), response(message())],
           max_steps=1)
    openai("boundary", "calls up to the step limit",
           [response(computer_call([CLICK])), response(computer_call([TYPE])), response(message())], max_steps=2)
    openai("boundary", "safety checks approved",
           [response(computer_call([CLICK], pending_safety_checks=[{"id": "sc_1", "code": "malicious_instructions",
                                                                    "message": "Check."}])), response(message())])
    openai("boundary", "safety checks refused",
           [response(computer_call([CLICK], pending_safety_checks=[{"id": "sc_1", "code": "irrelevant_domain",
                                                                    "message": "Check."}])), response(message())],
           approve={"checks": False})
    openai("boundary", "before_action refuses type after a click",
           [response(computer_call([CLICK, TYPE])), response(message())], approve={"deny": ["type"]})
    openai("hostile", "only an mcp_approval_request, no MCP declared",
           [response({"type": "mcp_approval_request", "server_label": "x", "name": "t", "arguments": "{}"}),
            response(message())])
    openai("hostile", "a function_call of an undeclared function",
           [response({"type": "function_call", "name": "bash", "arguments": "{}"}), response(message())])
    openai("hostile", "an output item of an unknown type",
           [response({"type": "hologram", "id": "h_1"}, computer_call([CLICK])), response(message())])
    openai("hostile", "neither a message nor a call", [response(), response(message())])
    openai("hostile", "only commentary", [response(message("thinking aloud", phase="commentary")),
                                          response(message())])
    openai("hostile", "a message that did not complete",
           [response(message("partial", status="incomplete")), response(message())])
    openai("hostile", "the second action is invalid: nothing runs",
           [response(computer_call([CLICK, {"type": "click", "button": "left", "x": "ten", "y": 1}])),
            response(message())])
    openai("hostile", "an action of an unknown type",
           [response(computer_call([CLICK, {"type": "teleport", "x": 1, "y": 1}])), response(message())])
    openai("hostile", "a call with no actions", [response(computer_call([])), response(message())])
    openai("hostile", "a call with both action and actions",
           [response(computer_call([CLICK], action=TYPE)), response(message())])
    openai("hostile", "a click with a fractional coordinate",
           [response(computer_call([{"type": "click", "button": "left", "x": 1.5, "y": 1}])), response(message())])
    openai("hostile", "a click with a button the driver has no name for",
           [response(computer_call([{"type": "click", "button": "sideways", "x": 1, "y": 1}])), response(message())])
    openai("boundary", "keypress of ctrl+c", [response(computer_call([{"type": "keypress", "keys": ["CTRL", "C"]}])),
                                              response(message())])
    openai("boundary", "keypress of no keys", [response(computer_call([{"type": "keypress", "keys": []}])),
                                               response(message())], hands_refuses="action-shape")
    openai("boundary", "a drag of one point", [response(computer_call([{"type": "drag", "path": [{"x": 1, "y": 1}]}])),
                                               response(message())], hands_refuses="action-shape")
    openai("boundary", "a scroll", [response(computer_call([{"type": "scroll", "x": 5, "y": 5, "scroll_x": 0,
                                                             "scroll_y": 300}])), response(message())])
    openai("boundary", "wait and screenshot actions", [response(computer_call([{"type": "wait"}, {"type": "screenshot"}])),
                                                       response(message())])
    openai("boundary", "the same call_id twice in one response",
           [response(computer_call([CLICK], id="call_dup"), computer_call([TYPE], id="call_dup")),
            response(message())])
    return out
