"""The official SDKs' side of each case: the SDKs' own toolsets and runners, with the fake drivers of
`fakes.py`, against the scripted stand-in API (`standin.py`).

Each function answers in the same wire form hands' `hands difftest` prints, so `compare.py` reads
both alike: Anthropic `tool_result` blocks with `acted`, OpenAI `function_call_output` items with
`acted`, `config_error` for a configuration the toolset refuses, `raised` for an exception that
escapes the SDK's own code.
"""

from __future__ import annotations

import copy
import json
import logging
import warnings
from typing import Any

import anthropic
from anthropic.tools import ToolError
from anthropic.tools.browser import BetaBrowserState, BetaAbstractBrowserToolset20260801
from anthropic.tools.browser import BetaBrowserNavigateResult
from anthropic.tools.computer import (
    BetaScreenshotResult,
    BetaAbstractComputerToolset20260801,
    BetaComputerCursorPositionResult,
)
from anthropic.lib.tools._toolsets._inputs import BROWSER_MEMBER_NAMES
from anthropic.lib.tools._toolsets._computer_inputs import COMPUTER_MEMBER_NAMES
from anthropic.lib.tools._toolsets._computer_registry import CONFIRM_REQUIRED

import openai
from openai.lib.browser import BrowserError, BrowserToolset, BROWSER_MEMBERS
from openai.lib.computer import ComputerToolset, ComputerUseError
from openai.types.responses import ResponseFunctionToolCall

import fakes

warnings.simplefilter("ignore")
# The SDKs log every exception a driver raises, with its traceback: the suite reads the results.
logging.getLogger("anthropic").setLevel(logging.CRITICAL)
logging.getLogger("openai").setLevel(logging.CRITICAL)

MODEL = "claude-opus-5"

_CLIENTS: dict[str, Any] = {}


def anthropic_client(base: str) -> anthropic.Anthropic:
    """A client at `base`, sharing one HTTP connection pool (a TLS context costs ~0.1 s to build)."""
    if "anthropic" not in _CLIENTS:
        _CLIENTS["anthropic"] = anthropic.Anthropic(api_key="difftest-key", base_url=base, max_retries=0)
    return _CLIENTS["anthropic"].with_options(base_url=base)


def openai_client(base: str) -> openai.OpenAI:
    if "openai" not in _CLIENTS:
        _CLIENTS["openai"] = openai.OpenAI(api_key="difftest-key", base_url=base, max_retries=0)
    return _CLIENTS["openai"].with_options(base_url=base)


def elide_images(value: Any) -> Any:
    """Image data replaced by its size, as hands' side prints it."""
    if isinstance(value, list):
        return [elide_images(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: elide_images(v) for k, v in value.items()}
    if out.get("type") == "base64" and isinstance(out.get("data"), str):
        out["data"] = "<" + png_size(value["data"]) + ">"
    if isinstance(out.get("image_url"), str) and ";base64," in out["image_url"]:
        out["image_url"] = "<" + png_size(value["image_url"].split(";base64,", 1)[1]) + ">"
    return out


def png_size(data: str) -> str:
    import base64
    import struct

    try:
        head = base64.b64decode(data[:44] + "=" * (-len(data[:44]) % 4))
    except ValueError:
        return "?"
    if head.startswith(b"\x89PNG") and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return f"{w}x{h}"
    return "?"


# --- Claude: the computer toolset -----------------------------------------------------------------


def confirm_for(deny: list[str]):
    def confirm(context: Any) -> bool:
        return context.member not in deny

    return confirm


class FakeComputer(BetaAbstractComputerToolset20260801):
    """A desktop that records which `tool_use` reached it and succeeds."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.acted: list[str] = []

    def _record(self, context: Any) -> None:
        self.acted.append(context.tool_use.id if context.tool_use is not None else "?")


def _computer_member(name: str):
    def member(self: FakeComputer, context: Any, input: Any) -> Any:
        self._record(context)
        if name in ("screenshot", "zoom"):
            return BetaScreenshotResult(data=fakes.png_b64(*fakes.SCREEN))
        if name == "cursor_position":
            return BetaComputerCursorPositionResult(x=0, y=0)
        return None

    member.__name__ = name
    return member


for _name in COMPUTER_MEMBER_NAMES:
    setattr(FakeComputer, _name, _computer_member(_name))


def run_turn(standin: Any, key: str, toolset: Any, blocks: list[dict]) -> dict:
    """One turn through the SDK's own tool runner: the stand-in answers the turn's blocks, then a
    final text; what the runner sent back second is the turn's answer."""
    base = standin.register(
        key,
        [
            {"content": blocks, "stop_reason": "tool_use"},
            {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"},
        ],
    )
    client = anthropic_client(base)
    try:
        runner = client.beta.messages.tool_runner(
            model=MODEL,
            max_tokens=1024,
            messages=[{"role": "user", "content": "Do the task."}],
            tools=[toolset],
        )
        runner.until_done()
    except Exception as exc:  # the SDK's own code refused to go on
        return {"raised": f"{type(exc).__name__}: {exc}"}
    requests = standin.script(key).requests
    declaration = requests[0]["tools"][0] if requests and requests[0].get("tools") else None
    if len(requests) < 2:
        return {"declaration": declaration, "results": []}
    answer = requests[1]["messages"][-1]["content"]
    return {"declaration": declaration, "results": answer}


def claude_computer(case: dict, standin: Any) -> dict:
    options: dict[str, Any] = {"confirm": confirm_for(case.get("deny", []))}
    declaration = case.get("declaration")
    if declaration is not None:
        extra = {k: v for k, v in declaration.items() if k not in ("type", "configs")}
        if "configs" in declaration:
            options["configs"] = copy.deepcopy(declaration["configs"])
        if extra:
            options["tool_configs"] = extra
    try:
        toolset = FakeComputer(**options)
    except Exception as exc:
        return {"config_error": f"{type(exc).__name__}: {exc}"}
    answer = run_turn(standin, f"{case['id']}/sdk", toolset, fakes.resolve(case["blocks"]))
    acted = set(toolset.acted)
    for block in answer.get("results", []):
        block["acted"] = block.get("tool_use_id") in acted
    # the members that need a `confirm` callback (a toolset serving them cannot be built without one)
    answer["confirm_members"] = sorted(CONFIRM_REQUIRED)
    return elide_images(answer)


# --- Claude: the browser toolset ------------------------------------------------------------------


class FakeClaudeBrowser(BetaAbstractBrowserToolset20260801):
    """A browser of the fixture pages that records which `tool_use` reached it."""

    def __init__(self, start_url: str, base: str, **options: Any) -> None:
        super().__init__(**options)
        self.acted: list[str] = []
        self.tabs = fakes.Tabs(start_url)
        self.base = base
        self.reported = 0

    def _browser_state(self, context: Any) -> BetaBrowserState:
        changes = [c for c in self.tabs.changes[self.reported:] if c["type"] == "tab_opened"]
        self.reported = len(self.tabs.changes)
        tabs = [dict(t) for t in self.tabs.tabs]
        return BetaBrowserState(tabs=tabs, state_changes=changes)

    def _tab(self, input: Any) -> dict:
        tab = self.tabs.find(getattr(input, "tab_id", None))
        if tab is None:
            raise ToolError("That tab is not open. Use list_tabs to see the tabs.")
        return tab

    def _target(self, target: Any) -> None:
        if target is None:
            return
        if getattr(target, "type", None) == "ref" and getattr(target, "ref", None) not in fakes.KNOWN_REFS:
            raise ToolError("Unknown ref: read the page again.")

    def _act(self, name: str, input: Any) -> Any:
        tab = self._tab(input) if name not in ("new_tab", "list_tabs", "switch_tab", "close_tab") else None
        for field in ("target", "from"):
            self._target(getattr(input, field, None))
        if name == "navigate":
            url = input.url
            if url in ("back", "forward", "reload"):
                return BetaBrowserNavigateResult(url=tab["url"], title=tab["title"])
            if not fakes.reachable(url, self.base):
                raise ToolError("Navigation failed: the page could not be reached.")
            tab["url"], tab["title"] = url, fakes.title_of(url)
            return BetaBrowserNavigateResult(url=url, title=tab["title"])
        if name in ("screenshot", "zoom"):
            return BetaScreenshotResult(data=fakes.png_b64(*fakes.VIEWPORT))
        if name in ("read_page", "find", "get_page_text", "read_console", "read_network"):
            return fakes.read_text()
        if name == "javascript_exec":
            return "undefined"
        if name == "new_tab":
            return dict(self.tabs.open())
        if name == "list_tabs":
            return [dict(t) for t in self.tabs.tabs]
        if name == "switch_tab":
            tab = self.tabs.switch(input.tab_id)
            if tab is None:
                raise ToolError("That tab is not open. Use list_tabs to see the tabs.")
            return dict(tab)
        if name == "close_tab":
            if not self.tabs.close(input.tab_id):
                raise ToolError("That tab is not open. Use list_tabs to see the tabs.")
            return None
        return None


def _browser_member(name: str):
    def member(self: FakeClaudeBrowser, context: Any, input: Any) -> Any:
        self.acted.append(context.tool_use.id if context.tool_use is not None else "?")
        return self._act(name, input)

    member.__name__ = name
    return member


for _name in BROWSER_MEMBER_NAMES:
    setattr(FakeClaudeBrowser, _name, _browser_member(_name))


def origin_policy(allow: list[str] | None):
    """The URL policy of a case: its origin allow-list (exact origins), or none (everything)."""

    def policy(context: Any, url: str) -> None:
        if allow is None:
            return
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(url)
            origin = f"{parts.scheme}://{parts.netloc}".lower()
        except ValueError:
            origin = ""
        if origin not in [a.lower().rstrip("/") for a in allow]:
            raise ToolError("This URL is not allowed.")

    return policy


def claude_browser(case: dict, standin: Any, base: str) -> dict:
    options: dict[str, Any] = {"url_policy": origin_policy(case.get("allow_origins"))}
    if not case.get("no_confirm"):
        options["confirm"] = confirm_for(case.get("deny", []))
    declaration = case.get("declaration")
    if declaration is not None:
        extra = {k: v for k, v in declaration.items() if k not in ("type", "configs")}
        if "configs" in declaration:
            options["configs"] = copy.deepcopy(declaration["configs"])
        if extra:
            options["tool_configs"] = extra
    try:
        toolset = FakeClaudeBrowser(case["start_url"], base, **options)
    except Exception as exc:
        return {"config_error": f"{type(exc).__name__}: {exc}"}
    answer = run_turn(standin, f"{case['id']}/sdk", toolset, fakes.resolve(case["blocks"]))
    acted = set(toolset.acted)
    for block in answer.get("results", []):
        block["acted"] = block.get("tool_use_id") in acted
    return elide_images(answer)


# --- OpenAI: the browser toolset (function tools) -------------------------------------------------


class FakeFnBrowser:
    """A browser driver of the fixture pages for `openai.lib.browser.BrowserToolset`, reporting
    observation metadata V1 as a current driver does."""

    def __init__(self, start_url: str, base: str) -> None:
        self.tabs = fakes.Tabs(start_url)
        self.base = base
        self.acted: list[str] = []
        self.current: str | None = None

    def state(self) -> dict:
        changes = []
        for index, change in enumerate(self.tabs.changes):
            changes.append({"type": change["type"], "sequence": index + 1, "tab_id": change["tab_id"]})
        return {
            "tabs": [
                {"id": t["tab_id"], "title": t["title"], "url": t["url"], "active": t["active"]} for t in self.tabs.tabs
            ],
            "observation": {
                "version": 1,
                "sequence": len(changes),
                "dropped_changes": 0,
                "title_truncated": False,
                "changes": changes,
            },
        }

    def _tab(self, action: dict) -> dict:
        tab = self.tabs.find(action.get("tab_id"))
        if tab is None:
            raise BrowserError("That tab is not open.")
        return tab

    def _ref(self, ref: Any) -> None:
        if ref is not None and ref not in fakes.KNOWN_REFS:
            raise BrowserError("Unknown ref: read the page again.")

    def act(self, name: str, action: dict) -> Any:
        self.acted.append(self.current or "?")
        if name not in ("new_tab", "switch_tab", "close_tab", "upload_file", "download_file"):
            tab = self._tab(action)
        if name in ("click", "hover", "scroll_to", "select_option", "set_checked"):
            self._ref(action.get("target"))
        if name == "type":
            self._ref(action.get("target"))
        if name == "read_page_scoped" and action.get("root") is not None:
            raise BrowserError("Unknown scope.")
        if name == "navigate":
            if not fakes.reachable(action["url"], self.base):
                raise BrowserError("Navigation failed: the page could not be reached.")
            tab["url"], tab["title"] = action["url"], fakes.title_of(action["url"])
            return None
        if name == "new_tab":
            url = action.get("url")
            if url is not None and not fakes.reachable(url, self.base):
                raise BrowserError("Navigation failed: the page could not be reached.")
            self.tabs.open(url or "about:blank")
            return None
        if name in ("switch_tab", "close_tab") and not action["tab_id"]:
            raise BrowserError("That tab is not open.")  # these two name a tab; "" names none
        if name == "switch_tab":
            if self.tabs.switch(action["tab_id"]) is None:
                raise BrowserError("That tab is not open.")
            return None
        if name == "close_tab":
            if not self.tabs.close(action["tab_id"]):
                raise BrowserError("That tab is not open.")
            return None
        if name == "read_page":
            return fakes.read_report()
        if name == "read_page_scoped":
            return {**fakes.read_report(), "scopes": []}
        if name in ("get_page_text", "read_diagnostics"):
            return fakes.read_report(with_elements=False)
        if name == "find":
            return fakes.read_report()
        if name in ("screenshot", "zoom"):
            return {"type": "input_image", "image_url": "data:image/png;base64," + fakes.png_b64(*fakes.VIEWPORT)}
        if name == "run_script":
            return "undefined"
        if name in ("upload_file", "download_file"):
            return {"version": 1, "status": "refused", "effect": "none", "cleanup": "not_started"}
        if name == "wait_for":
            if " ".join(action["text"].split()) not in fakes.PAGE_PHRASES:
                raise BrowserError("The text did not appear before the timeout.")
            return None
        return None


def _fn_member(name: str):
    def member(self: FakeFnBrowser, action: dict) -> Any:
        return self.act(name, action)

    member.__name__ = name
    return member


# What hands' Chromium driver implements (`hands difftest` reports its set, and compare.py checks
# that this fake implements the same): every member but the file transfers.
NOT_IMPLEMENTED = ("list_tabs", "upload_file", "download_file")
for _name in BROWSER_MEMBERS:
    if _name not in NOT_IMPLEMENTED:
        setattr(FakeFnBrowser, _name, _fn_member(_name))


def fn_policies(config: dict):
    deny = config.get("deny") or []
    allow = config.get("allow_origins")

    def confirm(context: dict) -> bool:
        return context["member"] not in deny

    def url_policy(context: dict, url: str) -> bool:
        if allow is None:
            return True
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(url)
            origin = f"{parts.scheme}://{parts.netloc}".lower()
        except ValueError:
            return False
        return origin in [a.lower().rstrip("/") for a in allow]

    return confirm, url_policy


def fn_browser(case: dict, base: str) -> dict:
    config = case.get("config") or {}
    confirm, url_policy = fn_policies(config)
    driver = FakeFnBrowser(case["start_url"], base)
    kwargs: dict[str, Any] = {"confirm": confirm, "url_policy": url_policy}
    for key in ("members", "additional_members", "confirm_reads"):
        if config.get(key) is not None:
            kwargs[key] = config[key]
    try:
        toolset = BrowserToolset(driver, **kwargs)
    except Exception as exc:
        return {"config_error": f"{type(exc).__name__}: {exc}"}
    outputs = []
    failed = False
    for raw in fakes.resolve(case["calls"]):
        call = ResponseFunctionToolCall(
            type="function_call",
            call_id=raw["call_id"],
            name=raw["name"],
            arguments=raw["arguments"],
            status="completed",
        )
        driver.current = raw["call_id"]
        before = len(driver.acted)
        try:
            # The runner's own entry: `skip` after a browser call of the response failed.
            output, ok = toolset._execute(call, skip=failed)
        except Exception as exc:
            outputs.append({"call_id": raw["call_id"], "raised": f"{type(exc).__name__}: {exc}", "acted": False})
            failed = True
            continue
        failed |= not ok
        item = elide_images(dict(output))
        item["acted"] = len(driver.acted) > before
        outputs.append(item)
    return {"tools": toolset.tools, "outputs": outputs}


# --- The runners ----------------------------------------------------------------------------------


def runner_anthropic(case: dict, standin: Any) -> dict:
    """The SDK's tool runner with a computer toolset, over the case's scripted answers."""
    key = f"{case['id']}/sdk"
    base = standin.register(key, copy.deepcopy(case["script"]))
    deny = case.get("approve", {}).get("deny", [])
    try:
        toolset = FakeComputer(confirm=confirm_for(deny))
    except Exception as exc:
        return {"config_error": f"{type(exc).__name__}: {exc}"}
    client = anthropic_client(base)
    outcome: dict[str, Any] = {}
    try:
        runner = client.beta.messages.tool_runner(
            model=MODEL,
            max_tokens=1024,
            messages=[{"role": "user", "content": case.get("task", "Do the task.")}],
            tools=[toolset],
            max_iterations=case.get("max_steps", 20),
        )
        last = runner.until_done()
        outcome["stop_reason"] = last.stop_reason
        outcome["raised"] = None
    except Exception as exc:
        outcome["raised"] = f"{type(exc).__name__}: {exc}"
    outcome["acted"] = list(dict.fromkeys(toolset.acted))
    script = standin.script(key)
    outcome["requests"] = len(script.requests)
    outcome["overruns"] = script.overruns
    outcome["answers"] = [elide_images((r.get("messages") or [{}])[-1]) for r in script.requests[1:]]
    return outcome


class FakeOpenAIComputer:
    """A desktop driver for `openai.lib.computer.ComputerToolset` that records which call reached it."""

    def __init__(self) -> None:
        self.acted: list[str] = []
        self.current: str | None = None

    def _act(self) -> None:
        self.acted.append(self.current or "?")

    def screenshot(self) -> dict:
        self._act()
        return {"type": "computer_screenshot", "image_url": "data:image/png;base64," + fakes.png_b64(*fakes.SCREEN)}


def _computer_action(name: str):
    def action(self: FakeOpenAIComputer, action: Any) -> None:
        self._act()

    action.__name__ = name
    return action


for _name in ("click", "double_click", "drag", "keypress", "move", "scroll", "type", "wait"):
    setattr(FakeOpenAIComputer, _name, _computer_action(_name))


class RecordingComputerToolset(ComputerToolset):
    """The SDK's computer toolset, telling the fake driver which call it is running."""

    def _dispatch(self, call: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.driver.current = call.call_id
        return super()._dispatch(call, **kwargs)


def runner_openai(case: dict, standin: Any) -> dict:
    """The SDK's computer loop (`ComputerToolset.run`) over the case's scripted answers."""
    key = f"{case['id']}/sdk"
    base = standin.register(key, copy.deepcopy(case["script"]))
    approve = case.get("approve", {})
    deny = approve.get("deny", [])
    driver = FakeOpenAIComputer()
    toolset = RecordingComputerToolset(driver)
    client = openai_client(base + "/v1")
    outcome: dict[str, Any] = {}
    try:
        toolset.run(
            client,
            {"model": "computer-use-2", "input": case.get("task", "Do the task."), "tools": [{"type": "computer"}]},
            max_steps=case.get("max_steps", 20),
            approve_safety_checks=lambda call: approve.get("checks", True),
            before_action=(lambda action: action.type not in deny) if deny else None,
        )
        outcome["raised"] = None
    except ComputerUseError as exc:
        outcome["raised"] = f"ComputerUseError: {exc}"
    except Exception as exc:
        outcome["raised"] = f"{type(exc).__name__}: {exc}"
    outcome["acted"] = list(dict.fromkeys(driver.acted))
    script = standin.script(key)
    outcome["requests"] = len(script.requests)
    outcome["overruns"] = script.overruns
    return outcome


