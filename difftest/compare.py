"""Normalising both sides' answers and classifying each case: agree, documented difference, or fail.

A case's answers are reduced to what the contract fixes (which calls acted, `is_error`/`ok`, the
halt texts, the kinds of blocks a result holds, the tab count of a state block, declarations read
for what they mean) and compared. Every difference is a `Diff` with a kind; a documented rule of
`docs/differences.md` (the `RULES` here, by the same ids) may explain it. A case whose differences are
all explained is a documented difference; any unexplained difference fails it.

Acknowledgement and error wordings are not compared: the specs leave them to the implementation
("any short text is acceptable"). The exact texts the specs fix are: the two halt texts. What every
error text hands writes must satisfy is checked on its own (`hygiene`), as the SDKs guarantee it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable

COMPUTER_HALT = "Not executed: an earlier computer action in this turn failed."
BROWSER_HALT = "Not executed: an earlier action in this turn failed."
HALTS = {"computer": COMPUTER_HALT, "browser": BROWSER_HALT}

# The characters the SDKs fold out of any text they write (anthropic `_sanitize.LINE_UNSAFE`): C0 and
# C1 controls, DEL, line and paragraph separators, bidi controls.
LINE_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
FIELD_MAX = 4096
NAME_ECHO_MAX = 200

SCREEN = (1280, 800)


@dataclass
class Diff:
    kind: str
    index: int | None
    detail: str
    rule: str | None = None

    def __str__(self) -> str:
        where = "" if self.index is None else f"[{self.index}]"
        return f"{self.kind}{where}: {self.detail}"


@dataclass
class Verdict:
    case: dict
    diffs: list[Diff] = field(default_factory=list)

    @property
    def unexplained(self) -> list[Diff]:
        return [d for d in self.diffs if d.rule is None]

    @property
    def rules(self) -> list[str]:
        return sorted({d.rule for d in self.diffs if d.rule})

    @property
    def status(self) -> str:
        if not self.diffs:
            return "agree"
        return "documented" if not self.unexplained else "fail"


# --- normalising ----------------------------------------------------------------------------------


def content_items(content: Any) -> list[Any]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def step_of(block: dict) -> dict:
    """One Anthropic `tool_result`, reduced."""
    kinds, texts, state = [], [], None
    for item in content_items(block.get("content")):
        kind = item.get("type") if isinstance(item, dict) else "?"
        kinds.append(kind)
        if kind == "text":
            texts.append(item.get("text", ""))
        if kind == "browser_state":
            state = {
                "tabs": len(item.get("tabs", [])),
                "changes": sorted(c.get("type", "?") for c in item.get("state_changes", [])),
                "has_empty_changes": "state_changes" in item and not item["state_changes"],
            }
    return {
        "id": block.get("tool_use_id"),
        "acted": bool(block.get("acted")),
        "is_error": bool(block.get("is_error")),
        "toolset_name": block.get("toolset_name"),
        "kinds": kinds,
        "texts": texts,
        "state": state,
    }


def output_of(item: dict) -> dict:
    """One OpenAI `function_call_output` (or an exception the toolset raised), reduced."""
    if "raised" in item:
        return {"id": item.get("call_id"), "raised": True, "acted": bool(item.get("acted")), "ok": None}
    output = item.get("output")
    if isinstance(output, str):
        text, images = output, 0
    else:
        parts = output or []
        text = next((p.get("text", "") for p in parts if p.get("type") == "input_text"), "")
        images = sum(1 for p in parts if p.get("type") == "input_image")
    try:
        payload = json.loads(text)
    except ValueError:
        payload = {}
    state = payload.get("state")
    result = payload.get("result")
    if result is None:
        result_kind = "none"
    elif isinstance(result, str):
        result_kind = "text"
    elif isinstance(result, dict) and "status" in result and "effect" in result:
        result_kind = "file"
    elif isinstance(result, dict) and "tabs" in result:
        result_kind = "state"
    elif isinstance(result, dict):
        result_kind = "read"
    else:
        result_kind = type(result).__name__
    return {
        "id": item.get("call_id"),
        "raised": False,
        "acted": bool(item.get("acted")),
        "ok": payload.get("ok"),
        "has_state": isinstance(state, dict),
        "tabs": len(state.get("tabs", [])) if isinstance(state, dict) else None,
        "observation": isinstance(state, dict) and "observation" in state,
        "result": result_kind,
        "images": images,
        "error": payload.get("error"),
    }


# --- declarations ---------------------------------------------------------------------------------

COMPUTER_MEMBERS = [
    "key", "hold_key", "type", "cursor_position", "mouse_move", "left_mouse_down", "left_mouse_up", "left_click",
    "left_click_drag", "right_click", "middle_click", "double_click", "triple_click", "scroll", "wait", "screenshot",
    "zoom",
]
BROWSER_MEMBERS = [
    "navigate", "list_tabs", "new_tab", "switch_tab", "close_tab", "read_page", "get_page_text", "read_console",
    "read_network", "find", "form_input", "file_upload", "scroll_to", "screenshot", "zoom", "left_click",
    "right_click", "middle_click", "double_click", "triple_click", "hover", "left_click_drag", "left_mouse_down",
    "left_mouse_up", "mouse_move", "scroll", "type", "key", "hold_key", "wait", "javascript_exec",
]
BROWSER_OFF = {"file_upload", "read_console", "read_network", "javascript_exec"}


def effective(entry: dict | None, family: str) -> dict:
    """What a toolset entry means: each member's `enabled` and `defer_loading`, and the entry's other
    fields; the same meaning whether the defaults are written out or left implicit."""
    members = COMPUTER_MEMBERS if family == "computer" else BROWSER_MEMBERS
    entry = entry or {}
    configs = entry.get("configs") or {}
    meaning: dict[str, Any] = {}
    for name in members:
        given = configs.get(name) or {}
        default = not (family == "browser" and name in BROWSER_OFF)
        meaning[name] = (given.get("enabled", default) is True, given.get("defer_loading", False) is True)
    others = {k: v for k, v in entry.items() if k not in ("configs",)}
    return {"members": meaning, "entry": others}


def api_rejects(entry: dict | None, family: str) -> str | None:
    """Why the Messages API would reject this toolset entry, or None. The rules hands-sim and the
    spec name: every member disabled, enabled members disagreeing on defer_loading, a configs key
    that is no member, a member setting that is not a boolean `enabled`/`defer_loading`, fields of
    the legacy tools or any field the entry does not take, a malformed cache_control."""
    if not entry:
        return None
    members = COMPUTER_MEMBERS if family == "computer" else BROWSER_MEMBERS
    for key, value in entry.items():
        if key == "type":
            continue
        if key == "configs":
            if not isinstance(value, dict):
                return "configs is not an object"
            for name, settings in value.items():
                if name not in members:
                    return f"configs names {name!r}, no member"
                if settings is None:
                    continue
                if not isinstance(settings, dict):
                    return f"configs.{name} is not an object"
                for k, v in settings.items():
                    if k not in ("enabled", "defer_loading") or not isinstance(v, bool):
                        return f"configs.{name}.{k} is not a boolean enabled/defer_loading"
        elif key == "cache_control":
            ok = isinstance(value, dict) and value.get("type") == "ephemeral" and set(value) <= {"type", "ttl"}
            if not ok or value.get("ttl") not in (None, "5m", "1h"):
                return "cache_control is malformed"
        elif key == "allowed_callers":
            if value != ["direct"]:
                return "allowed_callers is not [\"direct\"]"
        else:
            return f"the entry does not take {key!r}"
    meaning = effective(entry, family)["members"]
    enabled = [v for v in meaning.values() if v[0]]
    if not enabled:
        return "every member is disabled"
    if len({v[1] for v in enabled}) > 1:
        return "enabled members disagree on defer_loading"
    return None


# --- hygiene: what every text hands writes must satisfy ------------------------------------------


def long_strings(value: Any, minimum: int = NAME_ECHO_MAX + 1) -> list[str]:
    """The model-supplied strings of a case long enough that echoing them whole breaks the bound."""
    found: list[str] = []
    if isinstance(value, str) and len(value) >= minimum:
        found.append(value)
    elif isinstance(value, list):
        for v in value:
            found.extend(long_strings(v, minimum))
    elif isinstance(value, dict):
        for k, v in value.items():
            found.extend(long_strings(k, minimum))
            found.extend(long_strings(v, minimum))
    return found


def hygiene(texts: list[str], supplied: Any, index: int) -> list[Diff]:
    """An error text is at most 4,096 characters, one line, without control or bidi characters,
    and echoes no model-supplied string longer than 200 characters whole (anthropic
    `_sanitize`: `FIELD_MAX`, `LINE_UNSAFE`, `quoted_name`)."""
    diffs = []
    for text in texts:
        if len(text) > FIELD_MAX:
            diffs.append(Diff("hygiene-length", index, f"an error text of {len(text)} characters"))
        bad = sorted({f"U+{ord(c):04X}" for c in LINE_UNSAFE.findall(text)})
        if bad:
            diffs.append(Diff("hygiene-chars", index, f"an error text holds {', '.join(bad[:6])}"))
        for s in long_strings(supplied):
            if s[:NAME_ECHO_MAX + 1] in text:
                diffs.append(Diff("hygiene-echo", index, f"echoes a {len(s)}-character model string unbounded"))
                break
    return diffs


# --- comparing ------------------------------------------------------------------------------------


def compare_turn(case: dict, sdk: dict, hands: dict, family: str) -> Verdict:
    """A Claude toolset turn (`claude_computer`, `claude_browser`)."""
    verdict = Verdict(case)
    d = verdict.diffs
    for side, answer in (("sdk", sdk), ("hands", hands)):
        for key in ("harness_error", "raised", "wire_error"):
            if key in answer:
                d.append(Diff(f"{side}-{key}", None, str(answer[key])[:300]))
    if d:
        return verdict
    sdk_refused, hands_refused = "config_error" in sdk, "config_error" in hands
    if sdk_refused or hands_refused:
        if sdk_refused != hands_refused:
            who = "hands" if hands_refused else "the SDK"
            text = (hands if hands_refused else sdk)["config_error"]
            d.append(Diff("config", None, f"only {who} refuses the toolset: {text[:200]}"))
        explain_turn(verdict, [], [], family)
        return verdict
    if "confirm_members" in sdk and sorted(sdk["confirm_members"]) != sorted(hands.get("confirm_members") or []):
        d.append(Diff("confirm-members", None, f"members needing a confirmation: sdk {sorted(sdk['confirm_members'])}"
                      f" / hands {sorted(hands.get('confirm_members') or [])}"))
    if effective(sdk.get("declaration"), family) != effective(hands.get("declaration"), family):
        d.append(Diff("declaration", None, f"sdk {sdk.get('declaration')} / hands {hands.get('declaration')}"))
    sdk_steps = [step_of(b) for b in sdk.get("results", [])]
    hands_steps = [step_of(b) for b in hands.get("results", [])]
    if [s["id"] for s in sdk_steps] != [s["id"] for s in hands_steps]:
        d.append(Diff("answered", None, f"sdk {[s['id'] for s in sdk_steps]} / hands {[s['id'] for s in hands_steps]}"))
        return verdict
    blocks = case.get("blocks", [])
    halt = HALTS[family]
    for i, (s, h) in enumerate(zip(sdk_steps, hands_steps)):
        supplied = blocks[i] if i < len(blocks) else None
        if h["is_error"]:
            if "image" in h["kinds"] or "browser_state" in h["kinds"]:
                d.append(Diff("error-content", i, f"an is_error result holds {h['kinds']}"))
            d.extend(hygiene(h["texts"], supplied, i))
        if h["toolset_name"] != s["toolset_name"]:
            d.append(Diff("toolset_name", i, f"sdk {s['toolset_name']!r} / hands {h['toolset_name']!r}"))
        s_halted = s["is_error"] and s["texts"] == [halt]
        h_halted = h["is_error"] and h["texts"] == [halt]
        if s["acted"] != h["acted"] or s["is_error"] != h["is_error"] or s_halted != h_halted:
            d.append(Diff("outcome", i, f"sdk {brief(s)} / hands {brief(h)}"))
            continue
        if s["is_error"]:
            continue
        extra = strip_closing(s["kinds"], h["kinds"])
        if extra is not None:
            if extra:
                d.append(Diff("closing-shot", i, "hands adds a screenshot to this result"))
        else:
            d.append(Diff("kinds", i, f"sdk {s['kinds']} / hands {h['kinds']}"))
        if s["state"] != h["state"] and s["state"] is not None and h["state"] is not None:
            d.append(Diff("state", i, f"sdk {s['state']} / hands {h['state']}"))
    explain_turn(verdict, sdk_steps, hands_steps, family)
    return verdict


def brief(step: dict) -> str:
    if step.get("raised"):
        return "raised"
    if "ok" in step and "is_error" not in step:
        return f"{'acted' if step['acted'] else 'not acted'}, ok={step['ok']}"
    halted = step["is_error"] and len(step["texts"]) == 1 and step["texts"][0] in HALTS.values()
    what = "halted" if halted else ("error" if step["is_error"] else "ok")
    return f"{'acted' if step['acted'] else 'not acted'}, {what}"


def strip_closing(sdk_kinds: list[str], hands_kinds: list[str]) -> bool | None:
    """None when the kinds differ beyond hands' closing screenshot; True when hands has exactly one
    more image at the end; False when equal."""
    if sdk_kinds == hands_kinds:
        return False
    if hands_kinds == sdk_kinds + ["image"]:
        return True
    return None


def compare_fn_browser(case: dict, sdk: dict, hands: dict) -> Verdict:
    verdict = Verdict(case)
    d = verdict.diffs
    for side, answer in (("sdk", sdk), ("hands", hands)):
        if "harness_error" in answer:
            d.append(Diff(f"{side}-harness_error", None, str(answer["harness_error"])[:300]))
    if d:
        return verdict
    sdk_refused, hands_refused = "config_error" in sdk, "config_error" in hands
    if sdk_refused or hands_refused:
        if sdk_refused != hands_refused:
            who = "hands" if hands_refused else "the SDK"
            text = (hands if hands_refused else sdk)["config_error"]
            d.append(Diff("config", None, f"only {who} refuses the toolset: {text[:200]}"))
        explain_fn(verdict, [], [])
        return verdict
    sdk_tools = {t["name"]: t for t in sdk.get("tools", [])}
    hands_tools = {t["name"]: t for t in hands.get("tools", [])}
    if "implemented" in hands:
        fake = set(FN_IMPLEMENTED)
        if set(hands["implemented"]) - {"list_tabs"} != fake:
            d.append(Diff("harness", None, f"the fake driver implements {sorted(fake)}, hands' Chromium "
                          f"{sorted(hands['implemented'])}: update fakes.py and node/side.mjs"))
    if set(sdk_tools) != set(hands_tools):
        d.append(Diff("tools", None, f"sdk {sorted(sdk_tools)} / hands {sorted(hands_tools)}"))
    else:
        if list(sdk_tools) != list(hands_tools):
            d.append(Diff("tools", None, "order of the tools differs"))
        for name, tool in sdk_tools.items():
            mine = hands_tools[name]
            params, their = tool.get("parameters", {}), mine.get("parameters", {})
            if sorted(params.get("properties", {})) != sorted(their.get("properties", {})) or sorted(
                params.get("required", [])
            ) != sorted(their.get("required", [])):
                d.append(Diff("schema", None, f"{name}: fields sdk {sorted(params.get('properties', {}))} / hands "
                              f"{sorted(their.get('properties', {}))}"))
            for key in ("type", "strict"):
                if tool.get(key) != mine.get(key):
                    d.append(Diff("schema", None, f"{name}: {key} sdk {tool.get(key)!r} / hands {mine.get(key)!r}"))
            if params.get("additionalProperties") != their.get("additionalProperties"):
                d.append(Diff("schema", None, f"{name}: additionalProperties differs"))
            for prop, schema in params.get("properties", {}).items():
                other = their.get("properties", {}).get(prop)
                if other is not None and norm_schema(schema) != norm_schema(other):
                    d.append(Diff("schema", None, f"{name}.{prop}: sdk {norm_schema(schema)} / hands "
                                  f"{norm_schema(other)}"))
        lacking = [n for n, t in sdk_tools.items() if "untrusted" in t.get("description", "").lower()
                   and "untrusted" not in hands_tools[n].get("description", "").lower()]
        if lacking:
            d.append(Diff("untrusted-notice", None, f"{len(lacking)} of hands' tool descriptions lack the SDK's "
                          "notice that page content is untrusted"))
    sdk_out = [output_of(o) for o in sdk.get("outputs", [])]
    hands_out = [output_of(o) for o in hands.get("outputs", [])]
    for i, raw in enumerate(hands.get("outputs", [])):
        d.extend(sdk_validates(raw, case["calls"][i]["name"] if i < len(case.get("calls", [])) else "", i))
    for i, (s, h) in enumerate(zip(sdk_out, hands_out)):
        if h.get("error"):
            d.extend(hygiene([h["error"]], case["calls"][i], i))
        s_failed = s["raised"] or s["ok"] is not True
        h_failed = h["raised"] or h["ok"] is not True
        if s["acted"] != h["acted"] or s_failed != h_failed:
            d.append(Diff("outcome", i, f"sdk {brief(s)} / hands {brief(h)}"))
            continue
        if s["raised"] or h["raised"]:
            continue
        if s["has_state"] != h["has_state"]:
            d.append(Diff("state", i, f"state sent: sdk {s['has_state']} / hands {h['has_state']}"))
        elif s["has_state"] and s["tabs"] != h["tabs"]:
            d.append(Diff("tabs", i, f"tabs sdk {s['tabs']} / hands {h['tabs']}"))
        if s["has_state"] and h["has_state"] and s["observation"] != h["observation"]:
            d.append(Diff("observation", i, f"observation sdk {s['observation']} / hands {h['observation']}"))
        if not s_failed and (ack(s["result"]), s["images"]) != (ack(h["result"]), h["images"]):
            rule = "list-tabs-result" if (case.get("oracle") == "npm" and s["result"] == "state"
                                          and h["result"] == "none" and i < len(case["calls"])
                                          and case["calls"][i]["name"] == "browser_list_tabs") else None
            d.append(Diff("result", i, f"sdk {s['result']}+{s['images']} image(s) / hands {h['result']}+"
                          f"{h['images']} image(s)", rule))
    explain_fn(verdict, sdk_out, hands_out)
    return verdict


def sdk_validates(item: dict, name: str, index: int) -> list[Diff]:
    """hands' answer through the SDK's own validators of what a driver reports: the state
    (`openai.lib.browser._state`: tab fields, ids unique, one active tab, origins) and a structured
    read (`_read_result`: BrowserReadV1 — roles, refs unique and at most 256 bytes, labels, values,
    options, omitted codes)."""
    from openai.lib import browser as sdk_browser

    if "raised" in item:
        return []
    output = item.get("output")
    text = output if isinstance(output, str) else next(
        (p.get("text", "") for p in output or [] if p.get("type") == "input_text"), "")
    try:
        payload = json.loads(text)
    except ValueError:
        return [Diff("output-json", index, "hands' output text is not JSON")]
    diffs = []
    if isinstance(payload.get("state"), dict):
        try:
            sdk_browser._state(payload["state"])
        except Exception as exc:  # the SDK's verdict on hands' state
            diffs.append(Diff("state-invalid", index, f"the SDK refuses hands' state: {exc}"))
    member = name[len("browser_"):]
    result = payload.get("result")
    if payload.get("ok") and member in ("read_page", "get_page_text", "find", "read_page_scoped",
                                        "read_diagnostics") and isinstance(result, dict):
        try:
            sdk_browser._read_result(member, result)
        except Exception as exc:
            diffs.append(Diff("read-invalid", index, f"the SDK refuses hands' {member} report: {exc}"))
    return diffs


FN_IMPLEMENTED = [
    "navigate", "read_page", "get_page_text", "find", "click", "type", "key", "scroll", "select_option", "hover",
    "screenshot", "zoom", "new_tab", "switch_tab", "close_tab", "scroll_to", "wait_for", "hover_at", "set_checked",
    "click_at", "drag_path", "hold_keys", "read_page_scoped", "read_diagnostics", "run_script",
]
"""The driver members the suite's fake browser drivers implement (hands' Chromium's set)."""


def ack(kind: str) -> str:
    """An action's result: nothing or a line of text, the driver's choice (`str | None`)."""
    return "ack" if kind in ("none", "text") else kind


def norm_schema(schema: dict) -> dict:
    """The parts of a JSON Schema that decide what a strict function call may send."""
    keep = ("type", "enum", "minimum", "maximum", "minItems", "maxItems", "required", "additionalProperties")
    out = {k: schema[k] for k in keep if k in schema}
    if isinstance(out.get("type"), list):
        out["type"] = sorted(out["type"])
    if "items" in schema:
        out["items"] = norm_schema(schema["items"])
    if "properties" in schema:
        out["properties"] = {k: norm_schema(v) for k, v in schema["properties"].items()}
    return out


def compare_runner(case: dict, sdk: dict, hands: dict, api: str) -> Verdict:
    verdict = Verdict(case)
    d = verdict.diffs
    if "harness_error" in hands or "run_error" in hands or "config_error" in hands:
        d.append(Diff("hands-error", None, str(hands.get("harness_error") or hands.get("run_error")
                                                 or hands.get("config_error"))[:300]))
        return verdict
    if sdk.get("raised") and api == "anthropic":
        d.append(Diff("sdk-raised", None, sdk["raised"][:300]))
        return verdict
    if sdk["acted"] != hands["acted"]:
        d.append(Diff("acted", None, f"sdk {sdk['acted']} / hands {hands['acted']}"))
    if sdk["requests"] != hands["requests"]:
        d.append(Diff("requests", None, f"sdk sent {sdk['requests']} request(s) / hands {hands['requests']}"))
    sdk_end = runner_end(sdk, case, api)
    hands_end = hands["status"]
    if (sdk_end == "finished") != (hands_end == "finished") or (
        "step_limit" in (sdk_end, hands_end) and sdk_end != hands_end and api == "anthropic"
    ):
        d.append(Diff("end", None, f"sdk {sdk_end} / hands {hands_end} ({hands.get('reason', '')[:160]})"))
    if api == "anthropic":
        for i, (s, h) in enumerate(zip(sdk.get("answers", []), hands.get("answers", []))):
            s_err, h_err = answer_errors(s), answer_errors(h)
            if s_err != h_err:
                d.append(Diff("answer", i, f"is_error (halted) by call: sdk {s_err} / hands {h_err}"))
    explain_runner(verdict, sdk, hands, api)
    return verdict


def answer_errors(message: dict) -> dict[str, str]:
    """The `tool_result` blocks of the message a runner sent back: `ok`, `error` or `halted` (the exact
    halt text of the block's toolset) by `tool_use_id`."""
    out = {}
    for block in content_items(message.get("content")):
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            continue
        step = step_of(block)
        halt = HALTS.get(block.get("toolset_name") or "", None)
        out[step["id"]] = ("halted" if step["texts"] == [halt] else "error") if step["is_error"] else "ok"
    return out


def runner_end(sdk: dict, case: dict, api: str) -> str:
    if api == "openai":
        if sdk.get("raised"):
            return "stopped" if "max_steps" not in sdk["raised"] else "step_limit"
        return "finished"
    reason = sdk.get("stop_reason")
    if reason in ("end_turn", "stop_sequence"):
        return "finished"
    if reason == "tool_use":
        # the runner ran out of requests, or the turn had no call to run (then its text is the answer)
        return "step_limit" if sdk["requests"] >= case.get("max_steps", 20) else "finished"
    return f"stopped:{reason}"


# --- the documented rules (docs/differences.md) ---------------------------------------------------
#
# Each rule names one intended difference; its predicate looks at the block or call the difference is
# about, so a rule explains only what it documents. A rule under which one side refuses a call the
# other runs also explains the rest of that turn: the side that refused halts the later calls of
# its toolset (the `cascade`, checked to be exact).

NUMERIC_FIELDS = ("coordinate", "start_coordinate", "region", "scroll_amount", "repeat", "duration", "x", "y")
VIEWPORT = (1280, 800)


def lax_number(value: Any) -> bool:
    """A number written as a string or a boolean (at the top level, inside a coordinate list or a
    coordinate target): what the SDK's pydantic (lax mode) turns into a number."""
    if isinstance(value, list):
        return any(lax_number(v) for v in value)
    if isinstance(value, dict):
        return any(lax_number(value.get(k)) for k in ("x", "y"))
    return isinstance(value, bool) or (isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit())


def point_outside(value: Any, size: tuple[int, int] = SCREEN) -> bool:
    if isinstance(value, dict) and value.get("type") == "coordinate":
        value = [value.get("x"), value.get("y")]
    if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)):
        return False
    return not (0 <= value[0] < size[0] and 0 <= value[1] < size[1])


def region_outside(value: Any, size: tuple[int, int] = SCREEN) -> bool:
    if not (isinstance(value, list) and len(value) == 4 and all(type(v) is int for v in value)):
        return False
    x0, y0, x1, y1 = value
    return not (0 <= x0 < x1 <= size[0] and 0 <= y0 < y1 <= size[1])


COMPUTER_FIELDS = {
    "screenshot": set(), "left_mouse_down": set(), "left_mouse_up": set(), "cursor_position": set(),
    "zoom": {"region"}, "left_click": {"coordinate", "text"}, "right_click": {"coordinate", "text"},
    "middle_click": {"coordinate", "text"}, "double_click": {"coordinate", "text"},
    "triple_click": {"coordinate", "text"}, "left_click_drag": {"start_coordinate", "coordinate", "text"},
    "mouse_move": {"coordinate"}, "scroll": {"scroll_direction", "scroll_amount", "coordinate", "text"},
    "type": {"text"}, "key": {"text", "repeat"}, "hold_key": {"text", "duration"}, "wait": {"duration"},
}
"""The fields of each computer member's input in the SDK's generated types (`BetaComputer*Input`)."""

_CLICK = {"target", "modifiers", "tab_id"}
BROWSER_FIELDS = {
    "navigate": {"url", "tab_id"}, "list_tabs": set(), "new_tab": set(), "switch_tab": {"tab_id"},
    "close_tab": {"tab_id"}, "read_page": {"depth", "filter", "ref", "tab_id"}, "get_page_text": {"tab_id"},
    "read_console": {"tab_id"}, "read_network": {"tab_id"}, "find": {"query", "tab_id"},
    "form_input": {"target", "value", "tab_id"}, "file_upload": {"target", "document_ids", "paths", "tab_id"},
    "scroll_to": {"target", "tab_id"}, "screenshot": {"tab_id"}, "zoom": {"region", "tab_id"},
    "left_click": _CLICK, "right_click": _CLICK, "middle_click": _CLICK, "double_click": _CLICK,
    "triple_click": _CLICK, "hover": {"target", "tab_id"}, "left_click_drag": {"from", "target", "tab_id"},
    "left_mouse_down": {"target", "tab_id"}, "left_mouse_up": {"target", "tab_id"}, "mouse_move": {"target", "tab_id"},
    "scroll": {"scroll_direction", "target", "scroll_amount", "tab_id"}, "type": {"text", "tab_id"},
    "key": {"text", "repeat", "tab_id"}, "hold_key": {"duration", "text", "tab_id"}, "wait": {"duration", "tab_id"},
    "javascript_exec": {"text", "tab_id"},
}
"""The fields of each browser member's input in the SDK's generated types (`BetaBrowser*Input`)."""


def unknown_fields(data: dict, fields: set[str]) -> bool:
    if any(k not in fields for k in data):
        return True
    target = data.get("target")
    if isinstance(target, dict):
        allowed = {"type", "ref"} if target.get("type") == "ref" else {"type", "x", "y"}
        return any(k not in allowed for k in target)
    return False


def refusal_rule(block: dict, case: dict, family: str) -> str | None:
    """The documented rule under which hands refuses this block before acting while the SDK runs it."""
    name, data = block.get("name"), block.get("input")
    if not isinstance(data, dict):
        return None
    fields = (COMPUTER_FIELDS if family == "computer" else BROWSER_FIELDS).get(name)
    if fields is not None and unknown_fields(data, fields):
        return "unknown-field"
    if any(lax_number(data.get(k)) for k in NUMERIC_FIELDS) or lax_number(data.get("target")):
        return "strict-numbers"
    size = SCREEN if family == "computer" else VIEWPORT
    points = [data.get(k) for k in ("coordinate", "start_coordinate", "target", "from")]
    if any(point_outside(p, size) for p in points) or region_outside(data.get("region"), size):
        return "bounds"
    if any(isinstance(p, dict) and p.get("type") == "coordinate" and any(
            type(p.get(k)) is int and p[k] < 0 for k in ("x", "y")) for p in points):
        return "bounds"
    region = data.get("region")
    if family == "browser" and name == "zoom" and not (isinstance(region, list) and len(region) == 4):
        return "region-shape"
    repeat = data.get("repeat")
    if name == "key" and type(repeat) is int and not 1 <= repeat <= 100:
        return "limits"
    amount = data.get("scroll_amount")
    if name == "scroll" and type(amount) is int and not 0 <= amount <= 100:
        return "limits"
    duration = data.get("duration")
    if name in ("wait", "hold_key") and type(duration) is int and not 0 <= duration <= 300:
        return "limits"
    text = data.get("text")
    if name == "type" and isinstance(text, str) and any(
            unicodedata.category(ch) == "Cc" and ch not in "\n\r\t" for ch in text):
        return "control-text"
    if block.get("key_class") == "invalid" or case.get("key_class") == "invalid":
        if name in ("key", "hold_key") or (data.get("text") and name != "type"):
            return "key-grammar"
    target = data.get("target")
    if isinstance(target, dict) and isinstance(target.get("ref"), str) and len(target["ref"].encode()) > 256:
        return "ref-bound"
    if name == "navigate" and isinstance(data.get("url"), str) and not parses_as_url(data["url"]):
        return "url-parse"
    return None


def parses_as_url(text: str) -> bool:
    """Whether a URL has a scheme and, for http(s), a host (hands parses URLs before acting)."""
    from urllib.parse import urlsplit

    if text in ("back", "forward", "reload"):
        return True
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    if not parts.scheme:
        return bool(text) and " " not in text and not text.startswith("/")
    return parts.scheme not in ("http", "https") or bool(parts.netloc)


def lenient_rule(block: dict) -> str | None:
    """The documented rule under which the SDK refuses a block hands runs."""
    data = block.get("input")
    if not isinstance(data, dict):
        return None
    duration = data.get("duration")
    if block.get("name") in ("wait", "hold_key") and isinstance(duration, float) and 0 <= duration <= 300:
        return "fractional-seconds"
    return None


def explain_turn(verdict: Verdict, sdk_steps: list[dict], hands_steps: list[dict], family: str) -> None:
    case = verdict.case
    blocks = case.get("blocks", [])
    decl = case.get("declaration")
    halt = HALTS[family]
    cascade_from: int | None = None
    hands_refused = False
    for diff in list(verdict.diffs):
        if diff.kind == "config" and "only hands" in diff.detail and api_rejects(decl, family):
            diff.rule = "declaration"
        elif (diff.kind == "config" and "only hands" in diff.detail and case.get("no_confirm")
              and "confirm" in diff.detail):
            diff.rule = "confirm-required"
        elif diff.kind == "closing-shot":
            configs = (decl or {}).get("configs") or {}
            if (configs.get("screenshot") or {}).get("enabled") is not False:
                diff.rule = "closing-shot"
        elif diff.kind == "kinds" and diff.index is not None:
            block = blocks[diff.index] if diff.index < len(blocks) else {}
            s, h = sdk_steps[diff.index], hands_steps[diff.index]
            if block.get("name") == "close_tab" and s["kinds"] == ["browser_state"] and h["kinds"] == ["text",
                                                                                                    "browser_state"]:
                diff.rule = "ack-text"
        elif diff.kind == "outcome" and diff.index is not None:
            i = diff.index
            s, h = sdk_steps[i], hands_steps[i]
            if cascade_from is not None and i > cascade_from:
                # After the difference that explains an earlier block, the side that failed halts
                # the rest exactly, and the other side goes on.
                if (h["is_error"] and h["texts"] == [halt] and not h["acted"]) or (
                    s["is_error"] and s["texts"] == [halt] and not s["acted"]
                ):
                    diff.rule = "cascade"
                continue
            block = blocks[i] if i < len(blocks) else {}
            rule = None
            if h["is_error"] and not h["acted"] and (s["acted"] or not s["is_error"]):
                # hands refused before acting; the SDK ran it (its driver may still have failed)
                rule = refusal_rule(block, case, family)
            elif h["acted"] and not h["is_error"] and s["is_error"] and not s["acted"]:
                rule = lenient_rule(block)
            if rule is not None:
                diff.rule = rule
                cascade_from = i
                hands_refused = h["is_error"]
    if cascade_from is not None and hands_refused:
        # the side that refused halts the rest of its toolset's blocks in the turn, exactly
        for j in range(cascade_from + 1, len(hands_steps)):
            h = hands_steps[j]
            if not (h["is_error"] and h["texts"] == [halt] and not h["acted"]):
                verdict.diffs.append(Diff("halt", j, f"after its refusal hands goes on: {brief(h)}"))


FN_READS = {"read_page", "get_page_text", "find", "screenshot", "zoom", "list_tabs", "wait_for", "read_page_scoped"}


def fn_refusal_rule(call: dict) -> str | None:
    """The documented rule under which hands refuses a function call's arguments before acting while
    the SDK's validator lets them through."""
    name = call.get("name", "")[len("browser_"):]
    try:
        args = json.loads(call.get("arguments", ""))
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    if name == "find" and isinstance(args.get("query"), str):
        size = len(args["query"].strip().encode())
        if not 1 <= size <= 256:
            return "arg-bounds"
    if name == "select_option" and isinstance(args.get("values"), list):
        values = args["values"]
        if not 1 <= len(values) <= 64 or any(isinstance(v, str) and len(v.encode()) > 512 for v in values):
            return "arg-bounds"
    if name == "type" and isinstance(args.get("text"), str) and len(args["text"].encode()) > 100_000:
        return "arg-bounds"
    if name == "key" and isinstance(args.get("keys"), list):
        if not 1 <= len(args["keys"]) <= 32:
            return "arg-bounds"
        return "key-grammar"
    for key in ("target", "root"):
        if isinstance(args.get(key), str) and not 1 <= len(args[key].encode()) <= 256:
            return "ref-bound"
    if isinstance(args.get("tab_id"), str) and not 1 <= len(args["tab_id"].encode()) <= 128:
        return "ref-bound"
    return None


def integral_float(call: dict) -> bool:
    """Arguments holding a JSON number with a zero fraction (`5.0`) where an integer goes."""
    text = call.get("arguments", "")
    return bool(re.search(r"[:\[,]\s*-?\d+\.0+\s*[,\]}]", text))


def hands_bound_only(detail: str) -> bool:
    """A schema difference that is only hands declaring its own item bounds (`minItems`/`maxItems`)."""
    match = re.match(r"[^:]+: sdk (\{.*\}) / hands (\{.*\})$", detail)
    if not match:
        return False
    try:
        sdk, hands = (eval(part, {"__builtins__": {}}) for part in match.groups())  # repr of plain dicts
    except Exception:
        return False
    stripped = {k: v for k, v in hands.items() if k not in ("minItems", "maxItems")}
    return stripped == {k: v for k, v in sdk.items() if k not in ("minItems", "maxItems")} and sdk != hands


def explain_fn(verdict: Verdict, sdk_out: list[dict], hands_out: list[dict]) -> None:
    calls = verdict.case.get("calls", [])
    cascade_from: int | None = None
    for diff in list(verdict.diffs):
        if diff.kind == "tools" and diff.detail.startswith("order"):
            diff.rule = "tool-order"
        if diff.kind == "schema" and hands_bound_only(diff.detail):
            diff.rule = "arg-bounds"
        if diff.kind == "outcome" and diff.index is not None:
            i = diff.index
            s, h = sdk_out[i], hands_out[i]
            if cascade_from is not None and i > cascade_from:
                if not s["acted"] and not h["acted"]:
                    diff.rule = "cascade"
                continue
            rule = None
            if s["raised"] and not h["raised"] and not h["acted"] and h["ok"] is False:
                rule = "undeclared-call"
            elif h["acted"] and not s["acted"] and s["ok"] is False and i < len(calls) and integral_float(calls[i]):
                rule = "integral-floats"
            elif (s["acted"] or s["ok"]) and not h["acted"] and h["ok"] is False:
                rule = fn_refusal_rule(calls[i]) if i < len(calls) else None
            if rule is not None:
                diff.rule = rule
                cascade_from = i
    if cascade_from is not None and not hands_out[cascade_from]["acted"]:
        # after its refusal, hands skips the rest of the response's browser calls
        for j in range(cascade_from + 1, len(hands_out)):
            h = hands_out[j]
            if h["acted"] or h["ok"] is True:
                verdict.diffs.append(Diff("halt", j, f"after its refusal hands goes on: {brief(h)}"))


def explain_runner(verdict: Verdict, sdk: dict, hands: dict, api: str) -> None:
    case = verdict.case
    action_shape = (api == "openai" and case.get("hands_refuses") == "action-shape" and not hands["acted"]
                    and hands["status"] == "stopped" and "failed" in hands.get("reason", ""))
    for diff in verdict.diffs:
        if action_shape and diff.kind in ("acted", "requests", "end"):
            # hands refuses, before any action of the call, an action its driver cannot perform;
            # the SDK hands it to the driver
            diff.rule = "action-shape"
        if api == "anthropic" and case.get("last_step_calls") and diff.kind in ("acted", "answer"):
            # The SDK runs the tools of the last allowed turn and never sends their results; hands
            # asks for that turn with tool_choice none and runs nothing it would not answer.
            if set(hands["acted"]) <= set(sdk["acted"]):
                diff.rule = "last-step"
