"""Cases for Claude's browser toolset (`browser_toolset_20260801`), written in the wire schema of the
`anthropic` SDK's generated types (`BetaBrowser*Input`): one turn of `browser` blocks each, on the
fixture form (`$base/form.html`). `$ref:<label>` names a control of the fixture, `$tab:0` the start tab."""

from __future__ import annotations

from typing import Any

from . import ids


def ref(label: str) -> dict:
    return {"type": "ref", "ref": f"$ref:{label}"}


def point(x: int, y: int) -> dict:
    return {"type": "coordinate", "x": x, "y": y}


class Corpus:
    def __init__(self) -> None:
        self.cases: list[dict] = []

    def turn(self, kind: str, blocks: list[tuple[str, Any]], *, note: str, **extra: Any) -> None:
        case_id = ids.case_id("cb", kind, note, blocks, extra)
        uses = [{"type": "tool_use", "id": f"toolu_{case_id}_{i}", "name": name, "toolset_name": "browser",
                 "input": data} for i, (name, data) in enumerate(blocks)]
        self.cases.append({"id": case_id, "surface": "claude_browser", "kind": kind, "note": note,
                           "start_url": "$base/form.html", "blocks": uses, **extra})


def cases() -> list[dict]:
    c = Corpus()
    # --- valid: the members as the SDK's schema writes them -----------------------------------------
    c.turn("valid", [("navigate", {"url": "$base/page2.html"})], note="navigate")
    c.turn("valid", [("navigate", {"url": "reload"})], note="navigate reload")
    c.turn("valid", [("list_tabs", {})], note="list_tabs")
    c.turn("valid", [("new_tab", {})], note="new_tab")
    c.turn("valid", [("new_tab", {}), ("list_tabs", {})], note="new_tab then list_tabs")
    c.turn("valid", [("switch_tab", {"tab_id": "$tab:0"})], note="switch_tab to the open tab")
    c.turn("valid", [("new_tab", {}), ("close_tab", {"tab_id": "$tab:0"})], note="open a tab, close the first")
    c.turn("valid", [("read_page", {})], note="read_page")
    c.turn("valid", [("read_page", {"filter": "interactive"})], note="read_page interactive")
    c.turn("valid", [("get_page_text", {})], note="get_page_text")
    c.turn("valid", [("find", {"query": "Submit button"})], note="find")
    c.turn("valid", [("form_input", {"target": ref("Name"), "value": "Ada"})], note="form_input text")
    c.turn("valid", [("form_input", {"target": ref("Agree"), "value": True})], note="form_input checkbox")
    c.turn("valid", [("form_input", {"target": ref("Colour"), "value": "Green"})], note="form_input select")
    c.turn("valid", [("scroll_to", {"target": ref("Submit")})], note="scroll_to")
    c.turn("valid", [("screenshot", {})], note="screenshot")
    c.turn("valid", [("zoom", {"region": [0, 0, 200, 100]})], note="zoom")
    for member in ("left_click", "right_click", "middle_click", "double_click", "triple_click"):
        c.turn("valid", [(member, {"target": point(200, 200)})], note=f"{member} at a point")
    c.turn("valid", [("left_click", {"target": ref("Submit")})], note="left_click a ref")
    c.turn("valid", [("left_click", {"target": point(10, 10), "modifiers": "shift"})], note="left_click with shift")
    c.turn("valid", [("hover", {"target": ref("Submit")})], note="hover a ref")
    c.turn("valid", [("hover", {"target": point(30, 30)})], note="hover a point")
    c.turn("valid", [("left_click_drag", {"from": point(10, 10), "target": point(100, 100)})], note="drag")
    c.turn("valid", [("mouse_move", {"target": point(50, 50)})], note="mouse_move")
    c.turn("valid", [("left_mouse_down", {"target": point(50, 50)}), ("left_mouse_up", {"target": point(60, 60)})],
           note="press and release")
    c.turn("valid", [("scroll", {"scroll_direction": "down", "target": point(640, 400), "scroll_amount": 3})],
           note="scroll at a point")
    c.turn("valid", [("scroll", {"scroll_direction": "up", "target": point(640, 400)})], note="scroll, no amount")
    c.turn("valid", [("left_click", {"target": ref("Name")}), ("type", {"text": "hello"})], note="click then type")
    c.turn("valid", [("key", {"text": "Tab"})], note="key")
    c.turn("valid", [("key", {"text": "Tab", "repeat": 2})], note="key repeat")
    c.turn("valid", [("hold_key", {"text": "Shift", "duration": 0.5})], note="hold_key")
    c.turn("valid", [("wait", {"duration": 0.2})], note="wait")
    c.turn("valid", [("read_page", {}), ("left_click", {"target": ref("Submit")}), ("get_page_text", {})],
           note="read, click, read")
    c.turn("valid", [("navigate", {"url": "$base/page2.html"}), ("screenshot", {})], note="navigate, screenshot")

    # --- opt-in members and declarations ------------------------------------------------------------
    on = {"type": "browser_toolset_20260801", "configs": {m: {"enabled": True} for m in
                                                          ("javascript_exec", "read_console", "read_network")}}
    c.turn("valid", [("javascript_exec", {"text": "document.title"})], note="javascript_exec enabled",
           declaration=on)
    c.turn("valid", [("read_console", {})], note="read_console enabled", declaration=on)
    c.turn("valid", [("read_network", {})], note="read_network enabled", declaration=on)
    c.turn("boundary", [("javascript_exec", {"text": "1"})], note="javascript_exec off by default")
    c.turn("boundary", [("read_console", {})], note="read_console off by default")
    c.turn("boundary", [("navigate", {"url": "$base/page2.html"})], note="navigate disabled",
           declaration={"type": "browser_toolset_20260801", "configs": {"navigate": {"enabled": False}}})
    c.turn("hostile", [("read_page", {})], note="every member off",
           declaration={"type": "browser_toolset_20260801", "configs": {m: {"enabled": False} for m in (
               "navigate", "list_tabs", "new_tab", "switch_tab", "close_tab", "read_page", "get_page_text", "find",
               "form_input", "scroll_to", "screenshot", "zoom", "left_click", "right_click", "middle_click",
               "double_click", "triple_click", "hover", "left_click_drag", "left_mouse_down", "left_mouse_up",
               "mouse_move", "scroll", "type", "key", "hold_key", "wait")}})
    c.turn("hostile", [("read_page", {})], note="an unknown member in configs",
           declaration={"type": "browser_toolset_20260801", "configs": {"bogus": {"enabled": True}}})
    c.turn("hostile", [("read_page", {})], note="a legacy field",
           declaration={"type": "browser_toolset_20260801", "display_width_px": 1024})

    # --- which members demand a confirm callback ----------------------------------------------------
    c.turn("boundary", [("read_page", {})], note="no confirm callback, default members", no_confirm=True)
    c.turn("boundary", [("read_page", {})], note="no confirm callback, javascript_exec enabled", no_confirm=True,
           declaration={"type": "browser_toolset_20260801", "configs": {"javascript_exec": {"enabled": True}}})
    reads_only = {m: {"enabled": False} for m in (
        "navigate", "new_tab", "switch_tab", "close_tab", "form_input", "scroll_to", "left_click", "right_click",
        "middle_click", "double_click", "triple_click", "hover", "left_click_drag", "left_mouse_down",
        "left_mouse_up", "mouse_move", "scroll", "type", "key", "hold_key")}
    c.turn("boundary", [("read_page", {}), ("screenshot", {})], note="no confirm callback, reads only",
           no_confirm=True, declaration={"type": "browser_toolset_20260801", "configs": reads_only})

    # --- consent and the URL policy -----------------------------------------------------------------
    c.turn("boundary", [("navigate", {"url": "$base/page2.html"})], note="navigate refused by confirm",
           deny=["navigate"])
    c.turn("boundary", [("navigate", {"url": "https://example.com/"}), ("read_page", {})],
           note="navigate refused by the allow-list", allow_origins=["$base"])
    c.turn("boundary", [("navigate", {"url": "$base/page2.html"})], note="navigate allowed by the allow-list",
           allow_origins=["$base"])
    c.turn("boundary", [("left_click", {"target": ref("Submit")}), ("read_page", {})],
           note="left_click refused by confirm", deny=["left_click"])
    c.turn("boundary", [("type", {"text": "x"}), ("read_page", {})], note="type refused by confirm", deny=["type"])

    # --- hostile ------------------------------------------------------------------------------------
    for url in ("javascript:alert(1)", "file:///etc/passwd", "", "http://", "$base/" + "a" * 2100,
                "ftp://example.com/", "data:text/html,<h1>x</h1>"):
        # Under an allow-list: what a browser does with such a URL is the driver's business; that the
        # URL policy sees it, and refuses it, is the toolset's.
        c.turn("hostile", [("navigate", {"url": url})], note=f"navigate {url[:40]!r}", allow_origins=["$base"])
    for target in ({"type": "ref", "ref": "nope"}, {"type": "ref", "ref": "e" * 300}, {"type": "coordinate"},
                   {"type": "coordinate", "x": "1", "y": 2}, {"type": "coordinate", "x": -1, "y": 2},
                   {"type": "pixel", "x": 1, "y": 1}, {"ref": "$ref:Submit"}, "ref_1", None,
                   {"type": "ref", "ref": "$ref:Submit", "extra": 1}):
        c.turn("hostile", [("left_click", {"target": target})], note=f"left_click target {target!r}")
    c.turn("hostile", [("left_click", {})], note="left_click without target")
    c.turn("hostile", [("switch_tab", {"tab_id": "nope"})], note="switch_tab to a tab that is not open")
    c.turn("hostile", [("close_tab", {"tab_id": "nope"})], note="close_tab of a tab that is not open")
    c.turn("hostile", [("close_tab", {})], note="close_tab without tab_id")
    c.turn("hostile", [("read_page", {"tab_id": "nope"})], note="read_page of a tab that is not open")
    c.turn("hostile", [("zoom", {"region": [0, 0, 10]})], note="zoom with three edges")
    c.turn("hostile", [("scroll", {"scroll_direction": "sideways", "target": point(1, 1)})],
           note="scroll sideways")
    c.turn("hostile", [("key", {"text": 5})], note="key text a number")
    c.turn("hostile", [("wait", {"duration": "1"})], note="wait duration a string")
    c.turn("hostile", [("form_input", {"target": ref("Name")})], note="form_input without value")
    c.turn("hostile", [("form_input", {"target": ref("Name"), "value": {"x": 1}})], note="form_input value an object")
    for name in ("bogus", "a" * 5000, "read\u202epage", "navigate\n", "__class__", "_browser_state", "execute"):
        c.turn("hostile", [(name, {})], note=f"member {name[:30]!r}")
    for extra in ({"__proto__": {"x": 1}}, {"constructor": 1}, {"model_config": 1}):
        c.turn("hostile", [("read_page", extra)], note=f"read_page with {list(extra)}")
    c.turn("hostile", [("left_click", {"target": ref("Submit")}), ("navigate", {"url": "nope://x"}),
                       ("read_page", {}), ("screenshot", {})], note="a failure mid-batch", allow_origins=["$base"])
    c.turn("hostile", [("read_page", "x")], note="input a string")
    return c.cases
