"""The peers benchmark: hands (`hands mcp --browser`) and the browser tools agents use today
(Playwright MCP, chrome-devtools-mcp, agent-browser), all on the same Chromium, each driving
the same 10 scripted steps on six local pages. Every step is checked by what the page reported
to its server; an action whose effect had not landed when it returned is counted as stale.

Prints one table: tokens of every answer (o200k_base, offline), the largest answer, the median
action time, steps ok and stale actions, with ratios to hands. See README.md beside this file.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import time

import cold
import pages
import tools

# (verb, role, accessible name, argument, key the page reports, value it must report)
STEPS = {
    "article": [
        ("click", "link", "Section 14: Survey leg 14", None, "hash", "#s14"),
        ("click", "button", "Like section 14", None, "likes", "14"),
        ("click", "button", "Like section 3", None, "likes", "3,14"),
        ("click", "link", "Section 20: Survey leg 20", None, "hash", "#s20"),
        ("type", "textbox", "Comment", "Clear and useful", "comment", "Clear and useful"),
        ("check", "checkbox", "Subscribe to replies", None, "subscribed", "true"),
        ("click", "button", "Post comment", None, "posted", "Clear and useful"),
        ("click", "button", "Like section 20", None, "likes", "3,14,20"),
        ("click", "link", "Back to top", None, "hash", "#top"),
        ("click", "button", "Mark article as read", None, "read", "yes"),
    ],
    "table": [
        ("click", "button", "Sort by price", None, "sort", "price:asc"),
        ("click", "button", "Sort by price", None, "sort", "price:desc"),
        ("check", "checkbox", "Select Product 042", None, "selected", "042"),
        ("check", "checkbox", "Select Product 250", None, "selected", "042,250"),
        ("click", "button", "Sort by stock", None, "sort", "stock:asc"),
        ("check", "checkbox", "Select Product 117", None, "selected", "042,117,250"),
        ("uncheck", "checkbox", "Select Product 042", None, "selected", "117,250"),
        ("click", "button", "Sort by name", None, "sort", "name:asc"),
        ("type", "textbox", "Filter products", "blue", "filter", "blue"),
        ("click", "button", "Export selected", None, "exported", "117,250"),
    ],
    "checkout": [
        ("type", "textbox", "First name", "Ada", "first", "Ada"),
        ("type", "textbox", "Last name", "Lovelace", "last", "Lovelace"),
        ("type", "textbox", "Email", "ada@example.com", "email", "ada@example.com"),
        ("type", "textbox", "Street address", "12 St James Square", "street", "12 St James Square"),
        ("type", "textbox", "City", "London", "city", "London"),
        ("select", "combobox", "Country", ("GB", "United Kingdom"), "country", "GB"),
        ("select", "combobox", "Delivery", ("express", "Express"), "delivery", "express"),
        ("type", "textbox", "Card number", "4242424242424242", "card", "4242424242424242"),
        ("check", "checkbox", "Gift wrap", None, "gift", "true"),
        ("click", "button", "Place order", None, "order", "placed"),
    ],
    "widget": [
        ("click", "button", "Increase quantity", None, "qty", "2"),
        ("click", "button", "Increase quantity", None, "qty", "3"),
        ("click", "button", "Decrease quantity", None, "qty", "2"),
        ("click", "button", "Add to favorites", None, "favorite", "true"),
        ("type", "textbox", "Gift message", "For Ada", "message", "For Ada"),
        ("type", "textbox", "Newsletter email", "ada@example.com", "email", "ada@example.com"),
        ("select", "combobox", "Frequency", ("weekly", "Weekly"), "frequency", "weekly"),
        ("click", "button", "Subscribe", None, "subscribed", "ada@example.com/weekly"),
        ("click", "button", "Add to cart", None, "cart", "2"),
        ("click", "button", "Unsubscribe", None, "subscribed", "no"),
    ],
    "spa": [
        ("type", "textbox", "New task", "Write report", "draft", "Write report"),
        ("click", "button", "Add task", None, "tasks",
         "Buy milk,Call the bank,Book dentist,Water the plants,Pay rent,Write report"),
        ("check", "checkbox", "Done: Buy milk", None, "done", "Buy milk"),
        ("click", "button", "Delete Call the bank", None, "tasks",
         "Buy milk,Book dentist,Water the plants,Pay rent,Write report"),
        ("check", "checkbox", "Done: Write report", None, "done", "Buy milk,Write report"),
        ("click", "button", "Show completed", None, "view", "completed"),
        ("uncheck", "checkbox", "Done: Buy milk", None, "done", "Write report"),
        ("click", "button", "Show all", None, "view", "all"),
        ("click", "button", "Delete Book dentist", None, "tasks",
         "Buy milk,Water the plants,Pay rent,Write report"),
        ("click", "button", "Clear completed", None, "tasks", "Buy milk,Water the plants,Pay rent"),
    ],
    "controls": [
        ("check", "checkbox", "Enable item 17", None, "enabled", "17"),
        ("type", "textbox", "Quantity for item 17", "3", "draft17", "3"),
        ("click", "button", "Save item 17", None, "saved", "17=3"),
        ("check", "checkbox", "Enable item 444", None, "enabled", "17,444"),
        ("click", "link", "Details for item 444", None, "hash", "#item-444"),
        ("type", "textbox", "Quantity for item 250", "12", "draft250", "12"),
        ("click", "button", "Save item 250", None, "saved", "17=3,250=12"),
        ("check", "checkbox", "Enable item 499", None, "enabled", "17,444,499"),
        ("uncheck", "checkbox", "Enable item 17", None, "enabled", "444,499"),
        ("click", "button", "Save item 499", None, "saved", "17=3,250=12,499=0"),
    ],
}

# What a read right after a step's action must show (role, name, whether it is there), where the
# step's effect is in the page's controls; every step is also checked by time (below).
SEEN = {
    ("article", 9): [("button", "Marked as read", True)],
    ("spa", 1): [("checkbox", "Done: Write report", True)],
    ("spa", 3): [("button", "Delete Call the bank", False)],
    ("spa", 5): [("checkbox", "Done: Book dentist", False)],
    ("spa", 6): [("checkbox", "Done: Buy milk", False)],
    ("spa", 7): [("checkbox", "Done: Book dentist", True)],
    ("spa", 8): [("button", "Delete Book dentist", False)],
    ("spa", 9): [("checkbox", "Done: Write report", False)],
    ("controls", 2): [("button", "Saved item 17", True)],
    ("controls", 6): [("button", "Saved item 250", True)],
    ("controls", 9): [("button", "Saved item 499", True)],
}

TOOLS = ["hands", "playwright-mcp", "chrome-devtools-mcp", "agent-browser"]
# How long a step's effect may take to land after the action returned before the step fails.
EFFECT_DEADLINE_S = 3.0


def counter():
    """o200k_base from PyPI `bpe-openai` (built in, offline); else ~4 characters a token."""
    try:
        import bpe_openai

        enc = bpe_openai.get_encoding("o200k_base")
        return "o200k_base", lambda text: len(enc.encode(text))
    except ImportError:
        return "chars/4 (bpe-openai not installed)", lambda text: (len(text) + 3) // 4


def check(state, page, key, want, returned_at):
    """(ok, whether the effect landed after `returned_at`, when it landed or None)."""
    got = state.get(page, key)
    if got and got[0] == want:
        return True, got[1] > returned_at, got[1]
    deadline = time.time() + EFFECT_DEADLINE_S
    while time.time() < deadline:
        time.sleep(0.005)
        got = state.get(page, key)
        if got and got[0] == want:
            return True, got[1] > returned_at, got[1]
    return False, False, None


def run_tool(name, args, state, base, workdir):
    tool = tools.make(name, workdir, args.hands, base, args.locate)
    # (page, step index, ok, stale read, action s, effect s or None, note, answered before the
    # effect, action and the read right after s)
    results = []
    starts = []  # (page, index of its first call)
    try:
        for page in args.pages:
            steps = STEPS[page][: args.steps]
            state.reset(page)
            starts.append((page, len(tool.calls)))
            tool.open(f"{base}/{page}")
            tool.last_read = ""
            for idx, step in enumerate(steps):
                verb, role, target, arg, key, want = step
                try:
                    remembered = tool.remembered(role, target) if args.locate == "remember" else None
                    ref = remembered or tool.locate(role, target)
                except tools.NotFound as e:
                    results.append((page, idx, False, False, None, None, f"not found: {e}"[:300],
                                        False, None))
                    continue
                started, ended, text = tool.act(step, ref)
                if remembered and text.startswith("ERROR"):
                    # The ref from an earlier read was refused (the page re-rendered): read the
                    # page again and retry, as a model would.
                    tool.retries += 1
                    try:
                        ref = tool.locate(role, target)
                    except tools.NotFound as e:
                        results.append((page, idx, False, False, None, None, f"not found: {e}"[:300],
                                        False, None))
                        continue
                    started, ended, text = tool.act(step, ref)
                # A read right after the action, as a model that reads at once makes it.
                probe, probed = tool.probe()
                ok, early, landed = check(state, page, key, want, ended)
                # Stale: the page reported the effect only after that read had returned (the
                # page reports from the handler that changed its DOM, in the same task, so the
                # read cannot have seen it), or the read lacks what the effect shows.
                unseen = [(role_, name_) for role_, name_, there in SEEN.get((page, idx), [])
                          if tool.seen(probe, role_, name_) != there]
                stale = ok and (landed > probed or bool(unseen))
                note = "" if ok else f"page says {state.get(page, key)!r}, answer {text[:200]!r}"
                if ok and text.startswith("ERROR"):
                    # The effect landed, but the tool told the model it failed.
                    ok, note = False, f"the page changed, but the answer was an error: {text[:200]!r}"
                if stale:
                    note = f"the read right after missed {unseen or 'the effect'}"
                results.append((page, idx, ok, stale, ended - started,
                                None if landed is None else landed - started, note, early,
                                probed - started))
                if args.verbose:
                    print(f"  {name} {page} {idx + 1} {verb} {target!r}: ok={ok} stale={stale} "
                          f"{(ended - started) * 1000:.0f} ms, effect "
                          f"{'-' if landed is None else f'{(landed - started) * 1000:.0f} ms'}, "
                          f"read after {(probed - started) * 1000:.0f} ms {note}",
                          file=sys.stderr)
    finally:
        tool.close()
        tools.dump(os.path.join(workdir, f"{name}.jsonl"), tool)
    return tool, results, starts


def re_reads(calls, starts, count, whole_reads):
    """Per page: the tokens of the first read (whole), of the largest re-read that sent what
    changed (hands' `browser_read_page` after the first read of a document), and the largest
    ratio of such a re-read to the whole read of the same moment (`whole_reads`: call index ->
    that whole read's text)."""
    out = []
    bounds = [i for _, i in starts[1:]] + [len(calls)]
    for (page, start), end in zip(starts, bounds):
        reads = [count(text) for kind, text, _ in calls[start:end] if kind == "read"]
        changes = [(count(text), i) for i, (kind, text, _) in enumerate(calls[start:end], start)
                   if kind == "read" and tools.Hands.is_changes(text)]
        if reads and changes:
            now = [n / max(1, count(whole_reads[i])) for n, i in changes if i in whole_reads]
            out.append((page, reads[0], max(n for n, _ in changes),
                        statistics.median(n for n, _ in changes), max(now, default=None)))
    return out


def summarize(name, calls, results, count):
    tokens = [count(text) for _, text, _ in calls]
    actions = [r[4] for r in results if r[4] is not None]
    effects = [r[5] for r in results if r[5] is not None]
    return {
        "tool": name,
        "calls": len(calls),
        "tokens": sum(tokens),
        "largest": max(tokens, default=0),
        "over_25k": sum(1 for t in tokens if t > 25_000),
        "median_action_ms": statistics.median(actions) * 1000 if actions else float("nan"),
        "median_effect_ms": statistics.median(effects) * 1000 if effects else float("nan"),
        # Until the action had answered and its effect was in the page, whichever came later:
        # what a model that reads right after the action waits for the truth.
        "median_done_ms": statistics.median(
            max(r[4], r[5]) for r in results if r[4] is not None and r[5] is not None
        ) * 1000 if effects else float("nan"),
        # From the action's start to the end of a read made right after it.
        "median_read_after_ms": statistics.median(
            r[8] for r in results if r[8] is not None) * 1000 if actions else float("nan"),
        "ok": sum(1 for r in results if r[2]),
        "steps": len(results),
        "stale": sum(1 for r in results if r[3]),
        "early": sum(1 for r in results if r[7]),
        "failures": [(r[0], r[1] + 1, r[6]) for r in results if not r[2]],
    }


def table(rows, tokenizer):
    hands = next((r for r in rows if r["tool"] == "hands"), None)

    def ratio(r, key):
        if not hands or r is hands or not hands[key]:
            return ""
        return f" ({r[key] / hands[key]:.1f}x)"

    out = [
        f"tokens: {tokenizer}; ratios are the tool's over hands'",
        "| tool | calls | tokens | largest answer | answers > 25k | median action | "
        "median effect | median answer and effect | median action and read | steps ok | "
        "answered before effect | stale reads |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['tool']} | {r['calls']} | {r['tokens']:,}{ratio(r, 'tokens')} | "
            f"{r['largest']:,}{ratio(r, 'largest')} | {r['over_25k']} | "
            f"{r['median_action_ms']:.0f} ms{ratio(r, 'median_action_ms')} | "
            f"{r['median_effect_ms']:.0f} ms | {r['median_done_ms']:.0f} ms{ratio(r, 'median_done_ms')} | "
            f"{r['median_read_after_ms']:.0f} ms{ratio(r, 'median_read_after_ms')} | "
            f"{r['ok']}/{r['steps']} | {r['early']} | {r['stale']} |"
        )
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", required=True, help="the hands binary")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--pages", default=",".join(STEPS))
    parser.add_argument("--steps", type=int, default=10, help="steps per page (1 to 10)")
    parser.add_argument("--locate", choices=["read", "find", "remember"], default="read",
                        help="read: each step reads the page's controls (every tool); find: hands "
                             "and Playwright MCP use their find tool instead; remember: a step "
                             "reuses a ref from the tool's last read when it names the control, "
                             "and reads again (and retries) only when the action is refused")
    parser.add_argument("--json", help="also write the summary here")
    parser.add_argument("--keep", action="store_true", help="keep the answers (scratch dir)")
    parser.add_argument("--require-ok", action="store_true",
                        help="exit 1 unless every step of every tool is ok and none is stale")
    parser.add_argument("--cold", type=int, nargs="?", const=5, default=0, metavar="N",
                        help="instead of the steps, time N cold starts per tool (default 5): "
                             "launch to a ready tab (cold.py)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    args.pages = [p for p in args.pages.split(",") if p]
    unknown = [p for p in args.pages if p not in STEPS]
    if unknown:
        raise SystemExit(f"unknown pages {unknown}: give some of {', '.join(STEPS)}")

    tokenizer, count = counter()
    state = pages.State()
    server, base = pages.serve(state)
    workdir = tools.scratch()
    if args.cold:
        try:
            rows = cold.run([t for t in args.tools.split(",") if t], args, state, base, workdir)
        finally:
            server.shutdown()
            shutil.rmtree(workdir, ignore_errors=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
        return
    rows = []
    try:
        for name in [t for t in args.tools.split(",") if t]:
            print(f"running {name}…", file=sys.stderr)
            tool, results, starts = run_tool(name, args, state, base, workdir)
            rows.append(summarize(name, tool.calls, results, count))
            rows[-1]["retries"] = tool.retries
            rows[-1]["re_reads"] = re_reads(tool.calls, starts, count,
                                            dict(getattr(tool, "whole_reads", [])))
    finally:
        server.shutdown()
    print(table(rows, tokenizer))
    if args.locate == "remember":
        for r in rows:
            print(f"{r['tool']}: {r['calls'] / max(1, r['steps']):.2f} calls and "
                  f"{r['tokens'] / max(1, r['steps']):.0f} tokens per step; {r['retries']} actions "
                  "on a remembered ref were refused and retried after a read")
    for r in rows:
        for page, first, largest, median, now in r.get("re_reads", []):
            vs_now = "" if now is None else f"; at most {now:.2f}x the whole read of that moment"
            print(f"{r['tool']}: {page}: first read {first:,} tokens; re-reads that sent what "
                  f"changed: largest {largest:,} ({largest / first:.2f}x), median {median:,.0f}"
                  f"{vs_now}")
    for r in rows:
        for page, step, note in r["failures"]:
            print(f"{r['tool']}: {page} step {step} failed: {note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.keep:
        print(f"answers kept in {workdir}", file=sys.stderr)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.require_ok and any(r["ok"] != r["steps"] or r["stale"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
