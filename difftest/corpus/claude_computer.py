"""Cases for Claude's computer toolset (`computer_toolset_20260801`): one turn of `computer` blocks each,
valid (every member with the inputs the API's schema describes), boundary (the limits), hostile (wrong
types, unknown members and fields, names built to break a log line, attribute names of the SDK's own
classes), and declarations."""

from __future__ import annotations

from typing import Any

from . import ids

W, H = 1280, 800


class Corpus:
    def __init__(self) -> None:
        self.cases: list[dict] = []

    def turn(self, kind: str, blocks: list[tuple[str, Any]], *, note: str, **extra: Any) -> None:
        case_id = ids.case_id("cc", kind, note, blocks, extra)
        tool_uses = []
        for i, (name, data) in enumerate(blocks):
            block = {"type": "tool_use", "id": f"toolu_{case_id}_{i}", "name": name, "toolset_name": "computer",
                     "input": data}
            tool_uses.append(block)
        self.cases.append({"id": case_id, "surface": "claude_computer", "kind": kind, "note": note,
                           "blocks": tool_uses, **extra})


def cases() -> list[dict]:
    c = Corpus()

    # --- valid: each member alone, then batches ----------------------------------------------------
    c.turn("valid", [("screenshot", {})], note="screenshot")
    for region in ([0, 0, 640, 400], [100, 100, 300, 250], [0, 0, W, H], [W - 10, H - 10, W, H]):
        c.turn("valid", [("zoom", {"region": region})], note=f"zoom {region}")
    for member in ("left_click", "right_click", "middle_click", "double_click", "triple_click"):
        c.turn("valid", [(member, {})], note=f"{member} at the cursor")
        c.turn("valid", [(member, {"coordinate": [640, 400]})], note=f"{member} at a point")
        c.turn("valid", [(member, {"coordinate": [10, 10], "text": "shift"})], note=f"{member} with shift held")
    for mods in ("ctrl", "alt", "ctrl+shift", "super", "cmd", "ctrl+alt+shift"):
        c.turn("valid", [("left_click", {"coordinate": [5, 5], "text": mods})], note=f"left_click with {mods}")
    c.turn("valid", [("left_click_drag", {"start_coordinate": [10, 10], "coordinate": [200, 200]})], note="drag")
    c.turn("valid", [("left_click_drag", {"start_coordinate": [10, 10], "coordinate": [20, 20], "text": "alt"})],
           note="drag with alt")
    c.turn("valid", [("mouse_move", {"coordinate": [300, 300]})], note="mouse_move")
    c.turn("valid", [("left_mouse_down", {}), ("mouse_move", {"coordinate": [50, 60]}), ("left_mouse_up", {})],
           note="press, move, release")
    c.turn("valid", [("cursor_position", {})], note="cursor_position")
    for direction in ("up", "down", "left", "right"):
        c.turn("valid", [("scroll", {"scroll_direction": direction, "scroll_amount": 3})], note=f"scroll {direction}")
    c.turn("valid", [("scroll", {"scroll_direction": "down", "scroll_amount": 2, "coordinate": [640, 400]})],
           note="scroll at a point")
    c.turn("valid", [("scroll", {"scroll_direction": "down", "scroll_amount": 1, "text": "ctrl"})],
           note="scroll with ctrl")
    for text in ("hello", "héllo wörld ✓", "tab\there", "two\nlines", "", "ünï😀"):
        c.turn("valid", [("type", {"text": text})], note=f"type {text!r}")
    valid_keys = ["Return", "Tab", "Escape", "BackSpace", "Delete", "Up", "Down", "Left", "Right", "Home", "End",
                  "Page_Up", "Page_Down", "F1", "F12", "KP_Enter", "space", "a", "Z", "1", "ctrl+s", "alt+Tab",
                  "ctrl+shift+Escape", "ctrl+a", "shift+Tab", "super", "Enter", "esc"]
    for key in valid_keys:
        c.turn("valid", [("key", {"text": key})], note=f"key {key}", key_class="valid")
    c.turn("valid", [("key", {"text": "Tab", "repeat": 3})], note="key repeat 3", key_class="valid")
    c.turn("valid", [("key", {"text": "ctrl+a ctrl+c"})], note="key sequence of chords", key_class="valid")
    c.turn("valid", [("hold_key", {"text": "shift", "duration": 0})], note="hold_key 0 s", key_class="valid")
    c.turn("valid", [("hold_key", {"text": "ctrl", "duration": 1})], note="hold_key 1 s", key_class="valid")
    c.turn("valid", [("wait", {"duration": 0})], note="wait 0 s")
    c.turn("valid", [("wait", {"duration": 1})], note="wait 1 s")
    c.turn("valid", [("left_click", {"coordinate": [100, 100]}), ("type", {"text": "abc"}),
                     ("key", {"text": "Return"}), ("screenshot", {})], note="click, type, key, screenshot")
    c.turn("valid", [("mouse_move", {"coordinate": [1, 1]}), ("left_click", {}), ("scroll", {
        "scroll_direction": "up", "scroll_amount": 1})], note="three pointer actions")
    c.turn("valid", [("screenshot", {}), ("zoom", {"region": [0, 0, 100, 100]})], note="screenshot then zoom")
    c.turn("valid", [("type", {"text": "x"}), ("cursor_position", {})], note="ends with cursor_position")

    # --- boundary: the limits ----------------------------------------------------------------------
    for point in ([0, 0], [W - 1, H - 1], [W - 1, 0], [0, H - 1]):
        c.turn("boundary", [("left_click", {"coordinate": point})], note=f"click at the edge {point}")
    for point in ([W, 0], [0, H], [W, H], [99999, 5], [5, 2**31]):
        c.turn("boundary", [("left_click", {"coordinate": point})], note=f"click outside {point}")
    for region in ([0, 0, W + 1, H], [10, 10, 10, 20], [10, 10, 5, 20], [0, 0, 1, 1], [W - 1, H - 1, W, H]):
        c.turn("boundary", [("zoom", {"region": region})], note=f"zoom {region}")
    for repeat in (1, 100, 0, 101, -1, 1000):
        c.turn("boundary", [("key", {"text": "shift", "repeat": repeat})], note=f"key repeat {repeat}",
               key_class="valid")
    for amount in (0, 100, 101, -1, 100000):
        c.turn("boundary", [("scroll", {"scroll_direction": "down", "scroll_amount": amount})],
               note=f"scroll_amount {amount}")
    for duration in (301, -1, 100000):
        c.turn("boundary", [("wait", {"duration": duration})], note=f"wait {duration}")
        c.turn("boundary", [("hold_key", {"text": "shift", "duration": duration})], note=f"hold_key {duration}",
               key_class="valid")
    for duration in (0.5, 1.5):
        c.turn("boundary", [("wait", {"duration": duration})], note=f"wait {duration} (fractional)")
    c.turn("boundary", [("type", {"text": "a" * 300})], note="type 300 characters")
    c.turn("boundary", [("left_click", {"coordinate": [1, 1]})] * 20, note="a batch of 20 clicks")
    c.turn("boundary", [("key", {"text": "+".join(["ctrl", "alt", "shift", "super", "a"])})],
           note="a five-key chord", key_class="valid")
    # key names in another letter case: the key grammar is case-insensitive on the wire
    for key in ("return", "RETURN", "kp_enter", "KP_ENTER", "CTRL+S", "Ctrl+Shift+escape", "page_down",
                "backspace", "TAB", "f5"):
        c.turn("boundary", [("key", {"text": key})], note=f"key {key} (letter case)", key_class="case_variant")

    # --- hostile: shapes and types ------------------------------------------------------------------
    bad_points = ["1,2", [1], [1, 2, 3], [1.5, 2], [-1, 5], ["1", "2"], {"x": 1, "y": 2}, True, [None, 1],
                  [1e300, 1]]
    for point in bad_points:
        c.turn("hostile", [("left_click", {"coordinate": point})], note=f"coordinate {point!r}")
        c.turn("hostile", [("mouse_move", {"coordinate": point})], note=f"mouse_move coordinate {point!r}")
    for region in ([0, 0, 10], "0,0,10,10", [0, 0, 10, 10, 5], [0.5, 0, 10, 10], None, [-5, 0, 10, 10]):
        c.turn("hostile", [("zoom", {"region": region})], note=f"zoom region {region!r}")
    # Control characters no key types as a character (newline, return and tab are keys).
    for text in ("bell\u0007here", "nul\u0000", "esc\u001b[2J", "del\u007f", "c1\u0085"):
        c.turn("hostile", [("type", {"text": text})], note=f"type control text {text!r}")
    for text in (123, None, ["a"], {"t": "a"}, True):
        c.turn("hostile", [("type", {"text": text})], note=f"type text {text!r}")
        c.turn("hostile", [("key", {"text": text})], note=f"key text {text!r}")
    for amount in ("5", 5.0, 2.5, True, None, "five"):
        c.turn("hostile", [("scroll", {"scroll_direction": "down", "scroll_amount": amount})],
               note=f"scroll_amount {amount!r}")
    for direction in ("sideways", "UP", "", 1, None):
        c.turn("hostile", [("scroll", {"scroll_direction": direction, "scroll_amount": 1})],
               note=f"scroll_direction {direction!r}")
    for repeat in ("3", 3.0, 2.5, True):
        c.turn("hostile", [("key", {"text": "a", "repeat": repeat})], note=f"repeat {repeat!r}", key_class="valid")
    for duration in ("1", None, True, "NaN"):
        c.turn("hostile", [("wait", {"duration": duration})], note=f"wait duration {duration!r}")
    c.turn("hostile", [("left_click_drag", {"coordinate": [1, 1]})], note="drag without start_coordinate")
    c.turn("hostile", [("mouse_move", {})], note="mouse_move without coordinate")
    c.turn("hostile", [("scroll", {"scroll_direction": "up"})], note="scroll without scroll_amount")
    c.turn("hostile", [("wait", {})], note="wait without duration")
    c.turn("hostile", [("type", {})], note="type without text")
    c.turn("hostile", [("zoom", {})], note="zoom without region")
    # invalid key names and modifier texts
    for key in ("bogus_key", "ctrl+", "+", "ctrl++a", "ctrl+bogus", "a" * 5000, "Return\nRm -rf",
                "ctrl+\u202eevil", "\x00", "⌘+s", "shift+shift"):
        c.turn("hostile", [("key", {"text": key})], note=f"key {key[:40]!r}", key_class="invalid")
    for mods in ("q", "ctrl+q", "shift+bogus", "x" * 3000):
        c.turn("hostile", [("left_click", {"coordinate": [5, 5], "text": mods})], note=f"modifiers {mods[:30]!r}",
               key_class="invalid")
    c.turn("hostile", [("hold_key", {"text": "bogus_key", "duration": 1})], note="hold_key bogus", key_class="invalid")
    # unknown fields, prototype-pollution and attribute names
    for extra in ({"extra": 1}, {"__proto__": {"admin": True}}, {"constructor": {"prototype": {}}},
                  {"to_dict": 1}, {"model_fields": 1}, {"action": "left_click"}, {"coordinate": [1, 1], "x": 5}):
        c.turn("hostile", [("left_click", {"coordinate": [1, 1], **extra})], note=f"unknown field {list(extra)}")
        c.turn("hostile", [("screenshot", extra)], note=f"screenshot with {list(extra)}")
    c.turn("hostile", [("type", {"text": "a", "text2": "b"})], note="type with an unknown field")
    # unknown members and names built to break a line
    for name in ("bogus", "", "LEFT_CLICK", "left_click ", "a" * 5000, "left\u202eclick", "left\nclick",
                 "__init__", "to_dict", "execute", "_toolset_run", "call", "constructor", "__proto__", "computer",
                 "click", "browser_click", "left_click\x00"):
        c.turn("hostile", [(name, {})], note=f"member {name[:40]!r}")
        c.turn("hostile", [(name, {}), ("left_click", {"coordinate": [2, 2]})], note=f"member {name[:40]!r} then a click")
    # deep nesting and a large input
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    c.turn("hostile", [("type", {"text": deep})], note="type text nested 100 deep")
    c.turn("hostile", [("left_click", {"coordinate": [1, 1], "pad": "p" * 200000})], note="200 kB of padding")
    c.turn("hostile", [("type", "hello")], note="input is a string")
    c.turn("hostile", [("type", ["hello"])], note="input is an array")
    c.turn("hostile", [("screenshot", None)], note="input is null")
    # a failure in the middle of a batch
    c.turn("hostile", [("left_click", {"coordinate": [3, 3]}), ("key", {"text": "nope_key"}),
                       ("type", {"text": "never"}), ("screenshot", {})], note="second of four fails", key_class="invalid")
    c.turn("hostile", [("left_click", {"coordinate": [3, 3]}), ("zoom", {"region": [0, 0, 5]}),
                       ("left_click", {"coordinate": [3, 3]})], note="malformed zoom mid-batch")
    c.turn("hostile", [("bogus", {}), ("bogus", {}), ("bogus", {})], note="three unknown members")

    # --- declarations -------------------------------------------------------------------------------
    declarations = [
        ({"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": False}}}, "zoom off"),
        ({"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": True}}}, "zoom on, written out"),
        ({"type": "computer_toolset_20260801", "configs": {"screenshot": {"enabled": False}}}, "screenshot off"),
        ({"type": "computer_toolset_20260801", "configs": {m: {"enabled": False} for m in
                                                            ("type", "key", "hold_key")}}, "keyboard off"),
        ({"type": "computer_toolset_20260801", "configs": {m: {"defer_loading": True} for m in
                                                            ("zoom", "screenshot")}}, "mixed defer_loading"),
        ({"type": "computer_toolset_20260801", "configs": {m: {"enabled": False} for m in
                                                            ("key", "hold_key", "type", "cursor_position",
                                                             "mouse_move", "left_mouse_down", "left_mouse_up",
                                                             "left_click", "left_click_drag", "right_click",
                                                             "middle_click", "double_click", "triple_click",
                                                             "scroll", "wait", "screenshot", "zoom")}}, "all off"),
        ({"type": "computer_toolset_20260801", "configs": {"bogus": {"enabled": False}}}, "an unknown member"),
        ({"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": "no"}}}, "enabled is a string"),
        ({"type": "computer_toolset_20260801", "configs": {"zoom": {"colour": True}}}, "an unknown setting"),
        ({"type": "computer_toolset_20260801", "cache_control": {"type": "ephemeral"}}, "cache_control"),
        ({"type": "computer_toolset_20260801", "cache_control": {"type": "ephemeral", "ttl": "1h"}}, "1h cache"),
        ({"type": "computer_toolset_20260801", "cache_control": {"type": "persistent"}}, "bad cache_control"),
        ({"type": "computer_toolset_20260801", "display_width_px": 1280}, "a legacy field"),
        ({"type": "computer_toolset_20260801", "defer_loading": True}, "defer_loading on the entry"),
        ({"type": "computer_toolset_20260801", "name": "computer"}, "a name"),
    ]
    probe = [("left_click", {"coordinate": [4, 4]}), ("zoom", {"region": [0, 0, 50, 50]}), ("type", {"text": "d"})]
    for declaration, note in declarations:
        c.turn("boundary" if "bad" not in note else "hostile", probe, note=f"declaration: {note}",
               declaration=declaration)
    c.turn("boundary", [("left_click", {"coordinate": [4, 4]})],
           declaration={"type": "computer_toolset_20260801", "configs": {"screenshot": {"enabled": False}}},
           note="screenshot off, a batch without one")
    return c.cases
