"""The official Python MCP client (PyPI `mcp`) against `hands mcp`: lists the tools, calls every
one of them with sensible arguments, checks what came back, and prints one JSON report on stdout:
for each call its tool, whether it failed, and its size in tokens as clients count them (text
bytes / 4, images width x height / 750).

    python client.py --hands BIN --mode legacy|2026-07-28 --transport stdio|http \
        [--browser URL] [--desktop] [--approve all|none|elicit-yes|elicit-no] [--max-tokens N]

Exit status 0 only when every check held.
"""

import argparse
import asyncio
import base64
import json
import math
import os
import re
import struct
import subprocess
import sys

from mcp import StdioServerParameters
from mcp.client.client import Client
import mcp_types as types


def image_size(data_b64):
    raw = base64.b64decode(data_b64[: 64 * 1024 // 4 * 4] if len(data_b64) > 65536 else data_b64)
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        return struct.unpack(">II", raw[16:24])
    if raw[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(raw):
            marker, length = raw[i + 1], struct.unpack(">H", raw[i + 2 : i + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", raw[i + 5 : i + 9])
                return w, h
            i += 2 + length
    raise ValueError("not a PNG or JPEG")


def tokens(result):
    total = 0
    for block in result.content:
        if block.type == "text":
            total += math.ceil(len(block.text.encode()) / 4)
        elif block.type == "image":
            w, h = image_size(block.data)
            total += math.ceil(w * h / 750)
        else:
            total += math.ceil(len(block.model_dump_json()) / 4)
    return total


def text_of(result):
    return "\n".join(b.text for b in result.content if b.type == "text")


class Checks:
    def __init__(self):
        self.failures = []
        self.calls = []

    def check(self, ok, what):
        if not ok:
            self.failures.append(what)


async def run(args):
    checks = Checks()
    answers = {"elicit-yes": True, "elicit-no": False}
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": answers[args.approve]})

    server_args = ["mcp", "--max-tokens", str(args.max_tokens)]
    if args.browser:
        server_args += ["--browser", args.browser]
    if args.desktop:
        server_args += ["--desktop", "--spawn", args.spawn]
    server_args += ["--approve", "all" if args.approve == "all" else "none"]
    proc = None
    if args.transport == "stdio":
        target = StdioServerParameters(command=args.hands, args=server_args, env=dict(os.environ))
    else:
        proc = subprocess.Popen(
            [args.hands] + server_args + ["--http", "127.0.0.1:0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        url = None
        for line in proc.stderr:
            sys.stderr.write(line)
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                url = m.group(1)
                break
        if url is None:
            raise SystemExit("the HTTP server did not start")
        target = url
    kwargs = {"mode": args.mode}
    if args.approve in answers:
        kwargs["elicitation_callback"] = elicit
    try:
        async with Client(target, **kwargs) as client:
            listed = await client.list_tools()
            names = [t.name for t in listed.tools]
            for tool in listed.tools:
                checks.check(tool.input_schema.get("type") == "object", f"{tool.name}: schema")
                checks.check(tool.annotations is not None, f"{tool.name}: annotations")
                a = tool.annotations
                checks.check(
                    a.read_only_hint is not None and a.open_world_hint is not None,
                    f"{tool.name}: readOnlyHint/openWorldHint",
                )
                checks.check(
                    a.read_only_hint or a.destructive_hint is not None,
                    f"{tool.name}: destructiveHint",
                )

            async def call(name, arguments=None, expect_error=False):
                result = await client.call_tool(name, arguments or {})
                n = tokens(result)
                kinds = [b.type for b in result.content]
                checks.calls.append(
                    {"tool": name, "error": bool(result.is_error), "tokens": n, "content": kinds}
                )
                checks.check(n <= args.max_tokens, f"{name}: {n} tokens over {args.max_tokens}")
                checks.check(
                    bool(result.is_error) == expect_error,
                    f"{name}: is_error={result.is_error}: {text_of(result)[:300]}",
                )
                return result

            if args.browser:
                await browser_calls(call, checks, args, asked)
            if args.desktop:
                await desktop_calls(call, checks, args)
            called = {c["tool"] for c in checks.calls}
            checks.check(set(names) <= called, f"not called: {sorted(set(names) - called)}")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=20)
    report = {
        "mode": args.mode,
        "transport": args.transport,
        "tools": len(names),
        "calls": checks.calls,
        "asked": len(asked),
        "max_tokens_seen": max((c["tokens"] for c in checks.calls), default=0),
        "failures": checks.failures,
    }
    print(json.dumps(report))
    return 0 if not checks.failures else 1


def ref_of(text, role, label):
    # The compact read's line: `[ref] role [x] name …`, the name bare or JSON-quoted.
    name = "(?:" + re.escape(label) + "|" + re.escape(json.dumps(label)) + ")"
    m = re.search(r"^\[([^\]]+)\] " + role + r"(?: \[[ x]\])? " + name + r"(?: |$)", text, re.M)
    return m.group(1) if m else None


async def browser_calls(call, checks, args, asked):
    acting = args.approve in ("all", "elicit-yes")
    read = await call("browser_read_page")
    text = text_of(read)
    if args.big:
        # A 2,000-control page: the read covers the page up to a point and says how to reach the
        # rest; a read cut at the response budget ends with a cursor for its next part.
        checks.check("browser_find" in text, "big read: no word on what was left out")
        m = re.search(r'cursor "([^"]+)"', text)
        if args.max_tokens < 10000:
            checks.check(m is not None, "big read under a small budget: no cursor")
        if m:
            more = await call("browser_read_page", {"cursor": m.group(1)})
            checks.check(re.search(r"^\[e\d+\] ", text_of(more), re.M) is not None, "cursor page has no controls")
        # The controls past the read's end are reached with find.
        text = ""
        for query in ["Field 1996", "Button 1997", "Check 1998", "Select 1999"]:
            text += text_of(await call("browser_find", {"query": query})) + "\n"
        labels = ("Field 1996", "Button 1997", "Check 1998", "Select 1999")
    else:
        labels = ("Name", "Go", "Agree", "Pick")
    name_ref = ref_of(text, "textbox", labels[0])
    go_ref = ref_of(text, "button", labels[1])
    agree_ref = ref_of(text, "checkbox", labels[2])
    pick_ref = ref_of(text, "combobox", labels[3])
    checks.check(all([name_ref, go_ref, pick_ref, agree_ref]), f"refs missing: {text[:500]}")
    title = "clicked 1997" if args.big else "done"
    await call("browser_get_page_text")
    await call("browser_find", {"query": labels[1]})
    await call("browser_read_page_scoped", {"root": None, "depth": 3})
    shot = await call("browser_screenshot")
    checks.check(shot.content[0].type == "image", "screenshot is not an image")
    await call("browser_zoom", {"region": [0, 0, 200, 100]})
    await call("browser_list_tabs")
    await call("browser_wait_for", {"text": "Field 1996" if args.big else "Hello", "timeout_ms": 2000})
    refused = not acting
    typed = await call("browser_type", {"target": name_ref, "text": "Ada"}, expect_error=refused)
    clicked = await call("browser_click", {"target": go_ref}, expect_error=refused)
    if acting:
        checks.check(title in text_of(clicked), f"click did not say the title changed: {text_of(clicked)}")
        checks.check(len(clicked.content) == 1 and tokens(clicked) < 200, "click answered more than a line")
    else:
        checks.check("refused" in text_of(clicked) or "denied" in text_of(clicked).lower(), "refusal not said")
    await call("browser_select_option", {"target": pick_ref, "values": ["Beta" if args.big else "Two"]}, expect_error=refused)
    await call("browser_set_checked", {"target": agree_ref, "checked": True}, expect_error=refused)
    snap = await call("browser_hover", {"target": go_ref, "snapshot": True}, expect_error=refused)
    if acting:
        checks.check(re.search(r"^\[e\d+\] ", text_of(snap), re.M) is not None, "snapshot not returned when asked")
    await call("browser_key", {"keys": ["Tab"]}, expect_error=refused)
    await call("browser_scroll", {"direction": "down", "amount": 100}, expect_error=refused)
    await call("browser_scroll_to", {"target": go_ref}, expect_error=refused)
    await call("browser_read_diagnostics", {"source": "console", "limit": 5}, expect_error=refused)
    await call("browser_navigate", {"url": args.browser}, expect_error=refused)
    # Outside the allow-list: refused whatever the person says.
    await call("browser_navigate", {"url": "https://example.com/"}, expect_error=True)
    tab = await call("browser_new_tab", {"url": args.browser}, expect_error=refused)
    tabs = text_of(await call("browser_list_tabs"))
    ids = re.findall(r"\b(\S+?)\*? \"", tabs.split("tabs: ", 1)[-1])
    first = ids[0] if ids else "t?"
    await call("browser_switch_tab", {"tab_id": first}, expect_error=refused or not ids)
    if acting and len(ids) > 1:
        await call("browser_close_tab", {"tab_id": ids[-1]})
    else:
        await call("browser_close_tab", {"tab_id": "nope"}, expect_error=True)
    if args.approve.startswith("elicit"):
        checks.check(len(asked) > 0, "the person was never asked")


async def desktop_calls(call, checks, args):
    acting = args.approve in ("all", "elicit-yes")
    refused = not acting
    shot = await call("computer_screenshot")
    checks.check(shot.content[0].type == "image", "desktop screenshot is not an image")
    await call("computer_zoom", {"region": [0, 0, 400, 300]})
    await call("computer_cursor_position")
    await call("computer_wait", {"duration": 0.1})
    await call("computer_mouse_move", {"coordinate": [100, 100]}, expect_error=refused)
    for name in ["left_click", "right_click", "middle_click", "double_click", "triple_click"]:
        await call("computer_" + name, {"coordinate": [50, 50]}, expect_error=refused)
    await call("computer_key", {"text": "Escape"}, expect_error=refused)
    await call("computer_left_click_drag", {"start_coordinate": [10, 10], "coordinate": [60, 60]}, expect_error=refused)
    await call("computer_scroll", {"scroll_direction": "down", "scroll_amount": 2}, expect_error=refused)
    await call("computer_type", {"text": "hi"}, expect_error=refused)
    await call("computer_hold_key", {"text": "shift", "duration": 0.1}, expect_error=refused)
    with_shot = await call("computer_mouse_move", {"coordinate": [5, 5], "screenshot": True}, expect_error=refused)
    if acting:
        checks.check(any(b.type == "image" for b in with_shot.content), "screenshot not returned when asked")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hands", required=True)
    p.add_argument("--mode", default="legacy")
    p.add_argument("--transport", default="stdio", choices=["stdio", "http"])
    p.add_argument("--browser")
    p.add_argument("--big", action="store_true")
    p.add_argument("--desktop", action="store_true")
    p.add_argument("--spawn", default="1280x800")
    p.add_argument("--approve", default="all", choices=["all", "none", "elicit-yes", "elicit-no"])
    p.add_argument("--max-tokens", type=int, default=25000)
    args = p.parse_args()
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
