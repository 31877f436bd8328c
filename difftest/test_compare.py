"""The suite's own tests: the classification of synthetic answer pairs, so a comparison that cannot
fail is caught here (run by scripts/difftest before the suite)."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare  # noqa: E402
from compare import COMPUTER_HALT  # noqa: E402


def block(name: str, data: dict, i: int = 0) -> dict:
    return {"type": "tool_use", "id": f"t{i}", "name": name, "toolset_name": "computer", "input": data}


def result(i: int, *, acted: bool, content, is_error: bool = False, toolset: str = "computer") -> dict:
    out = {"type": "tool_result", "tool_use_id": f"t{i}", "toolset_name": toolset, "content": content, "acted": acted}
    if is_error:
        out["is_error"] = True
    return out


OK = [{"type": "text", "text": "OK"}]
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "<1x1>"}}
DECL = {"type": "computer_toolset_20260801"}


def turn(blocks, sdk_results, hands_results, declaration=None):
    case = {"id": "x", "surface": "claude_computer", "blocks": blocks, "declaration": declaration}
    sdk = {"declaration": declaration or DECL, "results": sdk_results}
    hands = {"declaration": declaration or DECL, "results": hands_results}
    return compare.compare_turn(case, sdk, hands, "computer")


class TurnTests(unittest.TestCase):
    def test_the_same_answers_agree(self) -> None:
        v = turn([block("left_click", {}, 0)], [result(0, acted=True, content=OK)],
                 [result(0, acted=True, content=OK)])
        self.assertEqual(v.status, "agree")

    def test_acting_where_the_sdk_refuses_fails(self) -> None:
        v = turn([block("left_click", {"coordinate": [1, 1]}, 0)],
                 [result(0, acted=False, content="invalid input", is_error=True)],
                 [result(0, acted=True, content=OK)])
        self.assertEqual(v.status, "fail")

    def test_a_wrong_halt_text_fails(self) -> None:
        blocks = [block("bogus", {}, 0), block("left_click", {}, 1)]
        sdk = [result(0, acted=False, content="unknown", is_error=True),
               result(1, acted=False, content=COMPUTER_HALT, is_error=True)]
        hands = [result(0, acted=False, content="unknown", is_error=True),
                 result(1, acted=False, content="Skipped.", is_error=True)]
        self.assertEqual(turn(blocks, sdk, hands).status, "fail")
        hands[1]["content"] = COMPUTER_HALT
        self.assertEqual(turn(blocks, sdk, hands).status, "agree")

    def test_an_image_in_an_error_result_fails(self) -> None:
        v = turn([block("bogus", {}, 0)], [result(0, acted=False, content="unknown", is_error=True)],
                 [result(0, acted=False, content=[{"type": "text", "text": "unknown"}, IMAGE], is_error=True)])
        self.assertEqual([d.kind for d in v.unexplained], ["error-content"])

    def test_a_bounds_refusal_is_documented_and_the_rest_must_halt(self) -> None:
        blocks = [block("left_click", {"coordinate": [5000, 1]}, 0), block("type", {"text": "a"}, 1)]
        sdk = [result(0, acted=True, content=OK), result(1, acted=True, content=OK)]
        hands = [result(0, acted=False, content="outside", is_error=True),
                 result(1, acted=False, content=COMPUTER_HALT, is_error=True)]
        v = turn(blocks, sdk, hands)
        self.assertEqual(v.status, "documented")
        self.assertEqual(v.rules, ["bounds", "cascade"])
        hands[1] = result(1, acted=True, content=OK)  # hands went on after its own refusal
        self.assertEqual(turn(blocks, sdk, hands).status, "fail")

    def test_a_refusal_inside_the_screen_is_not_a_bounds_difference(self) -> None:
        v = turn([block("left_click", {"coordinate": [10, 10]}, 0)], [result(0, acted=True, content=OK)],
                 [result(0, acted=False, content="no", is_error=True)])
        self.assertEqual(v.status, "fail")

    def test_the_closing_screenshot(self) -> None:
        blocks = [block("left_click", {}, 0)]
        sdk = [result(0, acted=True, content=OK)]
        hands = [result(0, acted=True, content=OK + [IMAGE])]
        self.assertEqual(turn(blocks, sdk, hands).rules, ["closing-shot"])
        off = {"type": "computer_toolset_20260801", "configs": {"screenshot": {"enabled": False}}}
        self.assertEqual(turn(blocks, sdk, hands, off).status, "fail")

    def test_error_texts_are_one_bounded_line(self) -> None:
        name = "left\u202eclick"
        blocks = [block(name, {}, 0)]
        sdk = [result(0, acted=False, content="unknown 'left click'", is_error=True)]
        hands = [result(0, acted=False, content=f"unknown `{name}`", is_error=True)]
        self.assertEqual([d.kind for d in turn(blocks, sdk, hands).unexplained], ["hygiene-chars"])
        long = "a" * 5000
        hands = [result(0, acted=False, content=f"unknown `{long}`", is_error=True)]
        kinds = {d.kind for d in turn([block(long, {}, 0)], sdk, hands).unexplained}
        self.assertEqual(kinds, {"hygiene-length", "hygiene-echo"})

    def test_declarations(self) -> None:
        rejected = {"type": "computer_toolset_20260801", "configs": {"bogus": {"enabled": True}}}
        self.assertIsNotNone(compare.api_rejects(rejected, "computer"))
        case = {"id": "x", "surface": "claude_computer", "blocks": [], "declaration": rejected}
        v = compare.compare_turn(case, {"declaration": rejected, "results": []}, {"config_error": "no"}, "computer")
        self.assertEqual(v.status, "documented")
        fine = {"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": False}}}
        self.assertIsNone(compare.api_rejects(fine, "computer"))
        case["declaration"] = fine
        v = compare.compare_turn(case, {"declaration": fine, "results": []}, {"config_error": "no"}, "computer")
        self.assertEqual(v.status, "fail")
        # written out or implicit, a default means the same
        same = {"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": True}}}
        self.assertEqual(compare.effective(same, "computer"), compare.effective(DECL, "computer"))


def fn_output(call_id: str, ok: bool, *, acted: bool, state: bool = True, error: str | None = None) -> dict:
    import json

    payload: dict = {"ok": ok}
    if state:
        payload["state"] = {"tabs": [{"id": "t", "title": "", "url": "about:blank", "active": True}]}
    if error:
        payload["error"] = error
    return {"type": "function_call_output", "call_id": call_id, "output": json.dumps(payload), "acted": acted}


class FunctionToolTests(unittest.TestCase):
    def compare(self, sdk_out, hands_out, calls=None):
        calls = calls or [{"call_id": "c0", "name": "browser_read_page", "arguments": "{}"}]
        case = {"id": "f", "surface": "fn_browser", "calls": calls}
        tool = {"type": "function", "name": "browser_read_page", "strict": True, "description": "x",
                "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}}
        return compare.compare_fn_browser(case, {"tools": [tool], "outputs": sdk_out},
                                          {"tools": [tool], "outputs": hands_out})

    def test_agree_and_fail(self) -> None:
        self.assertEqual(self.compare([fn_output("c0", True, acted=True)], [fn_output("c0", True, acted=True)]).status,
                         "agree")
        self.assertEqual(self.compare([fn_output("c0", False, acted=False)], [fn_output("c0", True, acted=True)]).status,
                         "fail")

    def test_state_is_sent_with_a_refusal(self) -> None:
        v = self.compare([fn_output("c0", False, acted=False, error="bad")],
                         [fn_output("c0", False, acted=False, state=False, error="bad")])
        self.assertEqual([d.kind for d in v.unexplained], ["state"])

    def test_an_arg_bound_is_documented(self) -> None:
        calls = [{"call_id": "c0", "name": "browser_find", "arguments": '{"query": "", "tab_id": null}'}]
        v = self.compare([fn_output("c0", True, acted=True)], [fn_output("c0", False, acted=False, error="q")], calls)
        self.assertEqual(v.rules, ["arg-bounds"])


class RunnerTests(unittest.TestCase):
    def test_acting_differently_fails(self) -> None:
        case = {"id": "r", "surface": "runner_anthropic", "max_steps": 5}
        sdk = {"acted": [], "requests": 1, "stop_reason": "max_tokens", "raised": None, "answers": []}
        hands = {"acted": ["t0"], "requests": 2, "status": "stopped", "reason": "", "answers": []}
        self.assertEqual(compare.compare_runner(case, sdk, hands, "anthropic").status, "fail")
        hands = {"acted": [], "requests": 1, "status": "stopped", "reason": "max_tokens", "answers": []}
        self.assertEqual(compare.compare_runner(case, sdk, hands, "anthropic").status, "agree")


class KnownFailuresTests(unittest.TestCase):
    def test_the_file_parses(self) -> None:
        import run

        divergences, cases = run.load_known(Path(__file__).resolve().parent / "known_failures.txt")
        for ids in cases.values():
            for d in ids:
                self.assertIn(d, divergences, f"{d} is used but not defined")


if __name__ == "__main__":
    unittest.main()
