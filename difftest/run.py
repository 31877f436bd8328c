"""The differential suite: every case of the corpora through the official SDKs (Python `anthropic` and
`openai`, and the `openai` npm package) and through hands (`hands difftest`, on a real Xvfb and a real
Chromium), compared and classified as agree, documented difference (a rule of docs/differences.md),
known failure (difftest/known_failures.txt) or fail. Exit status 1 when any case fails.

    python difftest/run.py [--hands target/debug/hands] [--only SURFACE] [-v] [--report PATH]

Run it with the interpreter of the venv that holds the pinned SDKs (scripts/difftest does).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import compare  # noqa: E402
import corpus  # noqa: E402
import fakes  # noqa: E402
import sdk_side  # noqa: E402
import standin as standin_mod  # noqa: E402

SURFACES = ("claude_computer", "claude_browser", "fn_browser", "runner_anthropic", "runner_openai")


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def serve_fixtures() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietFiles, directory=str(HERE / "fixtures")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}"


def substitute(value, base: str):
    if isinstance(value, str):
        return value.replace("$base", base)
    if isinstance(value, list):
        return [substitute(v, base) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, base) for k, v in value.items()}
    return value


def load_known(path: Path) -> tuple[dict[str, tuple[set[str], str]], dict[str, list[str]]]:
    """`known_failures.txt`: divergence definitions (`D<n> kind,kind: diagnosis`) and case lines
    (`<case-id> D<n> [D<m>…]`)."""
    divergences: dict[str, tuple[set[str], str]] = {}
    cases: dict[str, list[str]] = {}
    if not path.exists():
        return divergences, cases
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("D") else raw.strip()
        if not line:
            continue
        head = line.split(None, 1)[0]
        if head.startswith("D") and head[1:].isdigit():
            rest = line[len(head):].strip()
            kinds, _, diagnosis = rest.partition(":")
            divergences[head] = ({k.strip() for k in kinds.split(",") if k.strip()}, diagnosis.strip())
        else:
            cases[head] = line.split()[1:]
    return divergences, cases


def start_hands(binary: str, cases: list[dict], workdir: Path) -> tuple[subprocess.Popen, float]:
    path = workdir / "hands-cases.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases))
    out = (workdir / "hands-out.jsonl").open("w")
    err = (workdir / "hands-err.txt").open("w")
    proc = subprocess.Popen([binary, "difftest", str(path)], stdout=out, stderr=err,
                            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "error")})
    return proc, time.monotonic()


def finish_hands(proc: subprocess.Popen, started: float, workdir: Path, verbose: bool) -> dict[str, dict]:
    code = proc.wait()
    if verbose:
        print(f"hands difftest: {time.monotonic() - started:.1f} s", file=sys.stderr)
    if code != 0:
        print((workdir / "hands-err.txt").read_text()[-4000:], file=sys.stderr)
        raise SystemExit(f"hands difftest exited with {code}")
    answers = {}
    for line in (workdir / "hands-out.jsonl").read_text().splitlines():
        answer = json.loads(line)
        answers[answer.get("id")] = answer
    if verbose:
        by_surface: collections.Counter = collections.Counter()
        for case_id, answer in answers.items():
            by_surface[str(case_id).split("-")[0]] += answer.get("ms", 0)
        print("hands time by surface: " + ", ".join(f"{s} {ms / 1000:.1f} s" for s, ms in by_surface.items()),
              file=sys.stderr)
        slowest = sorted(answers.values(), key=lambda a: -a.get("ms", 0))[:5]
        print("slowest cases: " + ", ".join(f"{a.get('id')} {a.get('ms')} ms" for a in slowest), file=sys.stderr)
    return answers


def start_node(cases: list[dict], base: str, workdir: Path, wanted: bool) -> subprocess.Popen | None:
    node_dir = HERE / "node"
    if not wanted or not cases:
        return None
    if shutil.which("node") is None or not (node_dir / "node_modules" / "openai" / "package.json").exists():
        raise SystemExit("the npm side needs node and difftest/node/node_modules: run scripts/install-difftest-deps.sh "
                         "(or pass --no-node)")
    path = workdir / "node-cases.jsonl"
    with path.open("w") as out:
        for case in cases:
            resolved = fakes.resolve(case)
            resolved["base"] = base
            resolved["known_refs"] = sorted(fakes.KNOWN_REFS)
            out.write(json.dumps(resolved, ensure_ascii=False) + "\n")
    return subprocess.Popen(["node", str(node_dir / "side.mjs"), str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=node_dir)


def finish_node(proc: subprocess.Popen | None) -> dict[str, dict] | None:
    if proc is None:
        return None
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        print(stderr[-4000:], file=sys.stderr)
        raise SystemExit(f"the npm side exited with {proc.returncode}")
    return {a["id"]: a for a in map(json.loads, stdout.splitlines())}


def sdk_side_answers(cases: list[dict], standin, base: str, verbose: bool) -> dict[str, dict]:
    """Every case through the official Python SDKs, here, while hands and node run in their own
    processes."""
    started = time.monotonic()
    sdk_answers: dict[str, dict] = {}
    for case in cases:
        surface = case["surface"]
        if surface == "claude_computer":
            sdk_answers[case["id"]] = sdk_side.claude_computer(case, standin)
        elif surface == "claude_browser":
            sdk_answers[case["id"]] = sdk_side.claude_browser(case, standin, base)
        elif surface == "fn_browser":
            sdk_answers[case["id"]] = sdk_side.fn_browser(case, base)
        elif surface == "runner_anthropic":
            sdk_answers[case["id"]] = sdk_side.runner_anthropic(case, standin)
        else:
            sdk_answers[case["id"]] = sdk_side.runner_openai(case, standin)
    if verbose:
        print(f"SDK side: {time.monotonic() - started:.1f} s", file=sys.stderr)
    return sdk_answers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", default=str(ROOT / "target" / "debug" / "hands"))
    parser.add_argument("--only", choices=SURFACES, action="append")
    parser.add_argument("--case", action="append", help="run only these case ids")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--report", default=str(ROOT / "target" / "difftest" / "report.json"))
    parser.add_argument("--show", type=int, default=40, help="failures printed in full")
    parser.add_argument("--no-node", action="store_true", help="skip the npm package's side")
    args = parser.parse_args()

    started = time.monotonic()
    fixture_server, base = serve_fixtures()
    standin = standin_mod.StandIn()
    cases = [substitute(c, base) for c in corpus.all_cases()]
    if args.only:
        cases = [c for c in cases if c["surface"] in args.only]
    if args.case:
        cases = [c for c in cases if c["id"] in args.case]

    # hands' side: runner cases get a script of their own on the stand-in
    for case in cases:
        if case["surface"].startswith("runner_"):
            case["base_url"] = standin.register(f"{case['id']}/hands", json.loads(json.dumps(case["script"])))
    with tempfile.TemporaryDirectory(prefix="hands-difftest-") as tmp:
        workdir = Path(tmp)
        # hands and the npm side run in their own processes while the Python SDKs answer here.
        hands_proc, hands_started = start_hands(args.hands, cases, workdir)
        node_proc = start_node([c for c in cases if c["surface"] == "fn_browser"], base, workdir, not args.no_node)
        try:
            sdk_answers = sdk_side_answers(cases, standin, base, args.verbose)
            node_answers = finish_node(node_proc)
            hands_answers = finish_hands(hands_proc, hands_started, workdir, args.verbose)
        finally:
            # our own children only, by handle
            for proc in (hands_proc, node_proc):
                if proc is not None and proc.poll() is None:
                    proc.kill()
                    proc.wait()

    verdicts: list[compare.Verdict] = []
    for case in cases:
        surface = case["surface"]
        hands = hands_answers.get(case["id"], {"harness_error": "hands printed no answer"})
        sdk = sdk_answers[case["id"]]
        if surface == "claude_computer":
            verdicts.append(compare.compare_turn(case, sdk, hands, "computer"))
        elif surface == "claude_browser":
            verdicts.append(compare.compare_turn(case, sdk, hands, "browser"))
        elif surface == "fn_browser":
            verdicts.append(compare.compare_fn_browser(case, sdk, hands))
            if node_answers is not None:
                node_case = {**case, "id": case["id"] + "@node", "oracle": "npm"}
                node = node_answers.get(case["id"], {"harness_error": "node printed no answer"})
                verdicts.append(compare.compare_fn_browser(node_case, node, hands))
        else:
            api = "anthropic" if surface == "runner_anthropic" else "openai"
            script = standin.script(f"{case['id']}/hands")
            hands = {**hands, "requests": len(script.requests),
                     "answers": [sdk_side.elide_images((r.get("messages") or [{}])[-1]) for r in script.requests[1:]]
                     if api == "anthropic" else []}
            verdicts.append(compare.compare_runner(case, sdk, hands, api))
    standin.close()
    fixture_server.shutdown()

    return report(verdicts, args, time.monotonic() - started)


def report(verdicts: list[compare.Verdict], args: argparse.Namespace, elapsed: float) -> int:
    divergences, known = load_known(HERE / "known_failures.txt")
    rows: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    fails, known_hits, stale, unknown_kinds = [], collections.Counter(), [], []
    rule_use: collections.Counter = collections.Counter()
    records = []
    for v in verdicts:
        surface = v.case["surface"] + ("@npm" if v.case.get("oracle") == "npm" else "")
        status = v.status
        listed = known.get(v.case["id"])
        if listed is not None:
            if status == "fail":
                allowed = set().union(*(divergences.get(d, (set(), ""))[0] for d in listed))
                extra = {d.kind for d in v.unexplained} - allowed
                if extra:
                    unknown_kinds.append((v, extra))
                else:
                    status = "known"
                    for d in listed:
                        known_hits[d] += 1
            else:
                stale.append(v)
        if status == "fail":
            fails.append(v)
        rows[surface][status] += 1
        for rule in v.rules:
            rule_use[rule] += 1
        records.append({"id": v.case["id"], "surface": surface, "kind": v.case.get("kind"), "note": v.case.get("note"),
                        "status": status, "rules": v.rules, "diffs": [str(d) + (f" ({d.rule})" if d.rule else "")
                                                                       for d in v.diffs]})

    print("\ndifferential suite: hands against the official SDKs")
    print(f"{'surface':<22}{'cases':>7}{'agree':>8}{'documented':>12}{'known':>8}{'fail':>7}")
    total: collections.Counter = collections.Counter()
    for surface in sorted(rows):
        c = rows[surface]
        total.update(c)
        print(f"{surface:<22}{sum(c.values()):>7}{c['agree']:>8}{c['documented']:>12}{c['known']:>8}{c['fail']:>7}")
    print(f"{'total':<22}{sum(total.values()):>7}{total['agree']:>8}{total['documented']:>12}{total['known']:>8}"
          f"{total['fail']:>7}")
    if rule_use:
        print("documented differences used: " + ", ".join(f"{r} ×{n}" for r, n in sorted(rule_use.items())))
    if known_hits:
        print("known failures (difftest/known_failures.txt), by divergence:")
        for d, n in sorted(known_hits.items(), key=lambda kv: int(kv[0][1:])):
            print(f"  {d} ×{n}: {divergences.get(d, (set(), '?'))[1]}")
    if stale:
        print(f"known failures that now pass ({len(stale)}), remove them from known_failures.txt: "
              + " ".join(v.case["id"] for v in stale))
    for v, extra in unknown_kinds:
        print(f"  {v.case['id']} is listed as a known failure but also differs in {sorted(extra)}")
    if fails:
        print(f"\nFAILED: {len(fails)} case(s) differ from the SDK outside the documented differences")
        for v in fails[: args.show]:
            print(f"- {v.case['id']} ({v.case['surface']}, {v.case.get('kind')}): {v.case.get('note', '')[:90]}")
            for d in v.unexplained[:6]:
                print(f"    {d}")
        if len(fails) > args.show:
            print(f"  … and {len(fails) - args.show} more (see {args.report})")
    print(f"\nwall time {elapsed:.1f} s")
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(json.dumps({"counts": {s: dict(c) for s, c in rows.items()}, "cases": records},
                                            indent=1, ensure_ascii=False))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
