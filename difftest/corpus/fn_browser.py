"""Cases for the browser toolset as OpenAI function tools (`browser_<member>`), in the argument schema of
`openai.lib.browser` (every field required, `tab_id` nullable): configurations (member selection, opt-ins,
`confirm_reads`), valid arguments per member, the validator's bounds, hostile argument texts, and
consent. Each case is a list of function calls run one at a time as the runners do."""

from __future__ import annotations

import json
from typing import Any

from . import ids


class Corpus:
    def __init__(self) -> None:
        self.cases: list[dict] = []

    def calls(self, kind: str, calls: list[tuple[str, Any]], *, note: str, config: dict | None = None) -> None:
        case_id = ids.case_id("fb", kind, note, calls, config)
        wire = []
        for i, (name, args) in enumerate(calls):
            text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            wire.append({"call_id": f"call_{case_id}_{i}", "name": f"browser_{name}", "arguments": text})
        self.cases.append({"id": case_id, "surface": "fn_browser", "kind": kind, "note": note,
                           "start_url": "$base/form.html", "config": config or {}, "calls": wire})


T = None  # tab_id: the active tab

OPT_IN = ["hover_at", "set_checked", "click_at", "drag_path", "hold_keys", "read_page_scoped",
          "read_diagnostics", "run_script"]
"""The opt-in members hands' Chromium driver implements (it has no file transfers)."""


def cases() -> list[dict]:
    c = Corpus()
    valid: list[tuple[str, dict]] = [
        ("navigate", {"url": "$base/page2.html", "tab_id": T}),
        ("read_page", {"tab_id": T, "filter": "all"}),
        ("read_page", {"tab_id": T, "filter": "interactive"}),
        ("get_page_text", {"tab_id": T}),
        ("find", {"query": "Submit", "tab_id": T}),
        ("click", {"target": "$ref:Submit", "tab_id": T}),
        ("type", {"text": "Ada", "target": "$ref:Name", "tab_id": T}),
        ("type", {"text": "x", "target": None, "tab_id": T}),
        ("key", {"keys": ["Tab"], "tab_id": T}),
        ("key", {"keys": ["Control+a", "Backspace"], "tab_id": T}),
        ("scroll", {"direction": "down", "amount": 300, "tab_id": T}),
        ("scroll", {"direction": "up", "amount": 0, "tab_id": T}),
        ("select_option", {"target": "$ref:Colour", "values": ["g"], "tab_id": T}),
        ("hover", {"target": "$ref:Submit", "tab_id": T}),
        ("screenshot", {"tab_id": T}),
        ("zoom", {"tab_id": T, "region": [0, 0, 100, 100]}),
        ("new_tab", {"url": None}),
        ("new_tab", {"url": "$base/page2.html"}),
        ("list_tabs", {}),
        ("switch_tab", {"tab_id": "$tab:0"}),
        ("scroll_to", {"target": "$ref:Submit", "tab_id": T}),
        ("wait_for", {"text": "Difftest form", "timeout_ms": 1000, "tab_id": T}),
    ]
    for name, args in valid:
        c.calls("valid", [(name, args)], note=f"{name} {args}")
    c.calls("valid", [("read_page", {"tab_id": T, "filter": "all"}), ("click", {"target": "$ref:Submit", "tab_id": T}),
                      ("get_page_text", {"tab_id": T})], note="read, click, read")
    c.calls("valid", [("new_tab", {"url": None}), ("close_tab", {"tab_id": "$tab:0"}), ("list_tabs", {})],
            note="open a tab, close the first, list")

    all_on = {"additional_members": OPT_IN}
    opt_in: list[tuple[str, dict]] = [
        ("hover_at", {"tab_id": T, "x": 10, "y": 10}),
        ("set_checked", {"tab_id": T, "target": "$ref:Agree", "checked": True}),
        ("click_at", {"tab_id": T, "x": 20, "y": 20, "button": "left", "click_count": 1, "keys": []}),
        ("click_at", {"tab_id": T, "x": 20, "y": 20, "button": "right", "click_count": 2, "keys": ["Shift"]}),
        ("drag_path", {"tab_id": T, "path": [{"x": 1, "y": 1}, {"x": 50, "y": 50}], "keys": []}),
        ("hold_keys", {"tab_id": T, "keys": ["Shift"], "duration_ms": 10}),
        ("read_page_scoped", {"tab_id": T, "root": None, "depth": 3, "filter": "all"}),
        ("read_diagnostics", {"tab_id": T, "source": "console", "limit": 10}),
        ("run_script", {"tab_id": T, "source": "1+1", "timeout_ms": 1000}),
    ]
    for name, args in opt_in:
        c.calls("valid", [(name, args)], note=f"opt-in {name}", config=all_on)
        c.calls("boundary", [(name, args)], note=f"opt-in {name} not enabled")

    # --- configurations -----------------------------------------------------------------------------
    configs = [
        ({"members": ["read_page", "click"]}, "an explicit member list"),
        ({"members": []}, "no members"),
        ({"members": ["read_page", "read_page"]}, "a member named twice"),
        ({"members": ["bogus"]}, "an unknown member"),
        ({"members": ["read_page"], "additional_members": ["click_at"]}, "both lists"),
        ({"additional_members": ["run_script"]}, "one opt-in"),
        ({"confirm_reads": ["read_page"]}, "a protected read"),
        ({"confirm_reads": ["click"]}, "confirm_reads of a non-read"),
        ({"confirm_reads": ["read_page_scoped"]}, "confirm_reads of a member not enabled"),
        ({"members": ["list_tabs"]}, "only list_tabs"),
    ]
    for config, note in configs:
        c.calls("boundary", [("read_page", {"tab_id": T, "filter": "all"}), ("list_tabs", {})],
                note=f"config: {note}", config=config)
    c.calls("boundary", [("click", {"target": "$ref:Submit", "tab_id": T})], note="click outside the member list",
            config={"members": ["read_page"]})

    # --- consent ------------------------------------------------------------------------------------
    c.calls("boundary", [("click", {"target": "$ref:Submit", "tab_id": T}), ("read_page", {"tab_id": T, "filter": "all"})],
            note="click refused by confirm", config={"deny": ["click"]})
    c.calls("boundary", [("read_page", {"tab_id": T, "filter": "all"})], note="a protected read refused",
            config={"confirm_reads": ["read_page"], "deny": ["read_page"]})
    c.calls("boundary", [("read_page", {"tab_id": T, "filter": "all"})], note="a protected read approved",
            config={"confirm_reads": ["read_page"]})
    c.calls("boundary", [("navigate", {"url": "https://example.com/", "tab_id": T}), ("read_page", {"tab_id": T,
                                                                                                   "filter": "all"})],
            note="navigate refused by the allow-list", config={"allow_origins": ["$base"]})
    c.calls("boundary", [("new_tab", {"url": "https://example.com/"})], note="new_tab refused by the allow-list",
            config={"allow_origins": ["$base"]})
    c.calls("boundary", [("navigate", {"url": "$base/page2.html", "tab_id": T})], note="navigate refused by confirm",
            config={"deny": ["navigate"]})

    # --- the validator's bounds ---------------------------------------------------------------------
    bounds: list[tuple[str, dict, str]] = [
        ("scroll", {"direction": "down", "amount": 9007199254740991, "tab_id": T}, "amount at 2^53-1"),
        ("scroll", {"direction": "down", "amount": 9007199254740992, "tab_id": T}, "amount past 2^53-1"),
        ("scroll", {"direction": "down", "amount": -1, "tab_id": T}, "negative amount"),
        ("zoom", {"tab_id": T, "region": [10, 10, 10, 20]}, "empty region"),
        ("zoom", {"tab_id": T, "region": [0, 0, 9007199254740992, 5]}, "region past 2^53-1"),
        ("wait_for", {"text": "x", "timeout_ms": 0, "tab_id": T}, "timeout 0"),
        ("wait_for", {"text": "x", "timeout_ms": 30001, "tab_id": T}, "timeout 30001"),
        ("wait_for", {"text": "   ", "timeout_ms": 100, "tab_id": T}, "blank text"),
        ("wait_for", {"text": "é" * 129, "timeout_ms": 100, "tab_id": T}, "text of 258 bytes"),
        ("find", {"query": "", "tab_id": T}, "empty query"),
        ("find", {"query": "q" * 300, "tab_id": T}, "a 300-character query"),
        ("click", {"target": "r" * 257, "tab_id": T}, "a 257-byte ref"),
        ("click", {"target": "", "tab_id": T}, "an empty ref"),
        ("navigate", {"url": "$base/" + "a" * 2050, "tab_id": T}, "a 2,000-byte URL"),
        ("navigate", {"url": "example.com/x", "tab_id": T}, "a URL without a scheme"),
        ("key", {"keys": [], "tab_id": T}, "no keys"),
        ("key", {"keys": ["NotAKey"], "tab_id": T}, "an unknown key"),
        ("select_option", {"target": "$ref:Colour", "values": [], "tab_id": T}, "no values"),
        ("type", {"text": "t" * 100001, "target": "$ref:Name", "tab_id": T}, "100,001 bytes of text"),
    ]
    for name, args, note in bounds:
        c.calls("boundary", [(name, args)], note=f"{name}: {note}")
    opt_bounds: list[tuple[str, dict, str]] = [
        ("hold_keys", {"tab_id": T, "keys": ["Shift"], "duration_ms": 0}, "duration 0"),
        ("hold_keys", {"tab_id": T, "keys": ["Shift"], "duration_ms": 3001}, "duration 3001"),
        ("hold_keys", {"tab_id": T, "keys": [], "duration_ms": 10}, "no keys"),
        ("hold_keys", {"tab_id": T, "keys": ["a"] * 9, "duration_ms": 10}, "nine keys"),
        ("hold_keys", {"tab_id": T, "keys": ["Shift", "Shift"], "duration_ms": 10}, "a key twice"),
        ("hold_keys", {"tab_id": T, "keys": ["k" * 65], "duration_ms": 10}, "a 65-byte key"),
        ("click_at", {"tab_id": T, "x": 1, "y": 1, "button": "left", "click_count": 4, "keys": []}, "four clicks"),
        ("click_at", {"tab_id": T, "x": 1, "y": 1, "button": "left", "click_count": 1, "keys": ["Shift", "Shift"]},
         "a modifier twice"),
        ("click_at", {"tab_id": T, "x": 1, "y": 1, "button": "left", "click_count": 1, "keys": ["Hyper"]},
         "an unknown modifier"),
        ("click_at", {"tab_id": T, "x": 1.5, "y": 1, "button": "left", "click_count": 1, "keys": []}, "a fractional x"),
        ("drag_path", {"tab_id": T, "path": [{"x": 1, "y": 1}], "keys": []}, "one point"),
        ("drag_path", {"tab_id": T, "path": [{"x": 1, "y": 1}] * 101, "keys": []}, "101 points"),
        ("drag_path", {"tab_id": T, "path": [{"x": 1, "y": 1}, {"x": 1, "y": 1, "z": 1}], "keys": []}, "a point field"),
        ("read_page_scoped", {"tab_id": T, "root": None, "depth": 0, "filter": "all"}, "depth 0"),
        ("read_page_scoped", {"tab_id": T, "root": None, "depth": 33, "filter": "all"}, "depth 33"),
        ("read_page_scoped", {"tab_id": T, "root": "", "depth": 3, "filter": "all"}, "an empty root"),
        ("read_diagnostics", {"tab_id": T, "source": "console", "limit": 101}, "limit 101"),
        ("read_diagnostics", {"tab_id": T, "source": "disk", "limit": 1}, "an unknown source"),
        ("run_script", {"tab_id": T, "source": "", "timeout_ms": 10}, "an empty script"),
    ]
    for name, args, note in opt_bounds:
        c.calls("boundary", [(name, args)], note=f"{name}: {note}", config=all_on)
    for member in ("upload_file", "download_file"):
        c.calls("boundary", [(member, {"grant_id": "grant-1"})], note=f"{member} selected, not implemented",
                config={"additional_members": [member]})

    # --- hostile argument texts ---------------------------------------------------------------------
    hostile: list[tuple[str, Any, str]] = [
        ("read_page", "not json", "arguments that are not JSON"),
        ("read_page", "", "empty arguments"),
        ("read_page", "[]", "an array"),
        ("read_page", "null", "null"),
        ("read_page", '{"tab_id": null}', "a missing field"),
        ("read_page", '{"tab_id": null, "filter": "all", "extra": 1}', "an unknown field"),
        ("read_page", '{"tab_id": null, "filter": "all", "__proto__": {"x": 1}}', "__proto__"),
        ("read_page", '{"tab_id": null, "filter": "all", "constructor": {"prototype": {"x": 1}}}', "constructor"),
        ("read_page", '{"tab_id": null, "filter": "ALL"}', "a filter in capitals"),
        ("read_page", '{"tab_id": 5, "filter": "all"}', "a numeric tab_id"),
        ("read_page", '{"tab_id": null, "filter": "all", "tab_id": "x"}', "a duplicate key"),
        ("scroll", '{"direction": "down", "amount": 1e999, "tab_id": null}', "amount 1e999"),
        ("scroll", '{"direction": "down", "amount": NaN, "tab_id": null}', "amount NaN"),
        ("scroll", '{"direction": "down", "amount": 5.0, "tab_id": null}', "amount 5.0"),
        ("scroll", '{"direction": "down", "amount": "5", "tab_id": null}', "amount \"5\""),
        ("scroll", '{"direction": "down", "amount": true, "tab_id": null}', "amount true"),
        ("zoom", '{"tab_id": null, "region": [0, 0, 10, 10.0]}', "a float edge"),
        ("click", '{"target": ["$ref:Submit"], "tab_id": null}', "target an array"),
        ("click", '{"target": null, "tab_id": null}', "target null"),
        ("type", '{"text": 5, "target": null, "tab_id": null}', "text a number"),
        ("key", '{"keys": "Tab", "tab_id": null}', "keys a string"),
        ("key", '{"keys": [5], "tab_id": null}', "keys of a number"),
        ("navigate", '{"url": "javascript:alert(1)", "tab_id": null}', "a javascript: URL"),
        ("navigate", '{"url": "file:///etc/passwd", "tab_id": null}', "a file: URL"),
        ("navigate", '{"url": "http://127.0.0.1:1/\\u202e", "tab_id": null}', "a bidi control in a URL"),
        ("find", json.dumps({"query": "a\u202eb\nc", "tab_id": None}), "a bidi control and a newline"),
        ("find", json.dumps({"query": "q" * 5000, "tab_id": None}), "5,000 characters"),
        ("switch_tab", '{"tab_id": "nope"}', "a tab that is not open"),
        ("switch_tab", '{"tab_id": null}', "tab_id null"),
        ("close_tab", '{"tab_id": ""}', "an empty tab_id"),
        ("list_tabs", '{"x": 1}', "list_tabs with a field"),
        ("list_tabs", "{}", "list_tabs"),
    ]
    deep = "[" * 60 + "]" * 60
    hostile.append(("read_page", '{"tab_id": null, "filter": ' + deep + "}", "nesting 60 deep"))
    for name, text, note in hostile:
        config = {"allow_origins": ["$base"]} if name in ("navigate", "new_tab") else None
        c.calls("hostile", [(name, text)], note=f"{name}: {note}", config=config)
    for name in ("bogus", "READ_PAGE", "read_page ", "__proto__", "constructor", "a" * 3000):
        c.calls("hostile", [(name, "{}")], note=f"tool browser_{name[:30]}")
    c.calls("hostile", [("read_page", "not json"), ("read_page", {"tab_id": T, "filter": "all"})],
            note="a failed call, then a read")
    c.calls("hostile", [("click", {"target": "nope", "tab_id": T}), ("get_page_text", {"tab_id": T})],
            note="a click on an unknown ref, then a read")
    return c.cases
