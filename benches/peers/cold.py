"""Cold start: from launching a tool to a ready tab showing a page, for every tool in one run.

Each repetition starts the tool from nothing (a new process, a new browser, a new profile),
opens one local page and reads it once, then closes the tool before the next repetition. Two
times are kept per repetition: until the tool answered its first request (MCP `initialize`;
agent-browser has none, its first command starts its daemon) and until the page's read came
back (the page is loaded and its controls known: what a model needs before its first action).

Run through `scripts/bench-peers --cold [N]`; see README.md beside this file.
"""

import statistics
import sys
import time

import tools

# A small page every tool reads the same way: the checkout form of pages.py.
PAGE = "checkout"


def one_start(name, args, base, workdir):
    """(seconds to the first answer, seconds to a read of a loaded page) of one cold start."""
    started = time.time()
    tool = tools.make(name, workdir, args.hands, base, "read")
    try:
        answered = time.time() - started if isinstance(tool, tools.McpTool) else None
        tool.open(f"{base}/{PAGE}")
        tool.locate("button", "Place order")
        ready = time.time() - started
    finally:
        tool.close()
    return answered, ready


def measure(names, args, base, workdir, reps):
    """One row per tool: medians and minimums over `reps` cold starts, interleaved by tool so
    the machine's load falls on every tool alike."""
    samples = {name: [] for name in names}
    for _ in range(reps):
        for name in names:
            samples[name].append(one_start(name, args, base, workdir))
    rows = []
    for name in names:
        answered = [a for a, _ in samples[name] if a is not None]
        ready = [r for _, r in samples[name]]
        rows.append({
            "tool": name,
            "reps": len(ready),
            "answered_ms": statistics.median(answered) * 1000 if answered else None,
            "ready_ms": statistics.median(ready) * 1000,
            "ready_min_ms": min(ready) * 1000,
        })
    return rows


def table(rows):
    hands = next((r for r in rows if r["tool"] == "hands"), None)

    def ratio(r):
        if not hands or r is hands:
            return ""
        return f" ({r['ready_ms'] / hands['ready_ms']:.1f}x)"

    out = [
        f"cold start to a ready tab ({PAGE} page loaded and read); ratios are the tool's over hands'",
        "| tool | starts | first answer (median) | ready tab (median) | ready tab (best) |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        first = "—" if r["answered_ms"] is None else f"{r['answered_ms']:.0f} ms"
        out.append(
            f"| {r['tool']} | {r['reps']} | {first} | {r['ready_ms']:.0f} ms{ratio(r)} | "
            f"{r['ready_min_ms']:.0f} ms |"
        )
    return "\n".join(out)


def run(names, args, state, base, workdir):
    print(f"cold starts: {args.cold} per tool…", file=sys.stderr)
    state.reset(PAGE)
    rows = measure(names, args, base, workdir, args.cold)
    print(table(rows))
    return rows
