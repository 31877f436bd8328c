"""A scripted stand-in of the two model APIs for the differential suite.

Each script lives under its own path prefix, `/s/<key>`, so the SDK side and hands' side of a case
consume their own copy of the same answers: the Anthropic clients post to `<prefix>/v1/messages`,
the OpenAI clients to `<prefix>/v1/responses`. Every request body is recorded. An answer the script
does not have (the client asked once more than scripted) is recorded as an overrun and answered
with a plain final answer, so a runner that asks too often ends instead of hanging.

The stand-in fills what every real answer carries (ids, usage, `type`, `object`), so a script
writes only what the case is about: the blocks or items, `stop_reason`, `status`.
"""

from __future__ import annotations

import json
import threading
import itertools
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler


class Script:
    def __init__(self, answers: list[dict]) -> None:
        self.answers = list(answers)
        self.requests: list[dict] = []
        self.overruns = 0


class StandIn:
    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsable": raw.decode("utf-8", "replace")}
                path = self.path.split("?", 1)[0]
                answer = standin.answer(path, body)
                data = json.dumps(answer).encode()
                self.send_response(404 if answer.get("type") == "error" else 200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def register(self, key: str, answers: list[dict]) -> str:
        """Registers a script; returns its base URL (Anthropic: as is; OpenAI: append `/v1`)."""
        with self.lock:
            self.scripts[key] = Script(answers)
        return f"{self.url}/s/{key}"

    def script(self, key: str) -> Script:
        return self.scripts[key]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self.ids):06d}"

    def answer(self, path: str, body: dict) -> dict:
        if not path.startswith("/s/"):
            return {"type": "error", "error": {"type": "not_found_error", "message": "no such path"}}
        rest = path[3:]
        if rest.endswith("/v1/messages"):
            key, api = rest[: -len("/v1/messages")], "anthropic"
        elif rest.endswith("/v1/responses"):
            key, api = rest[: -len("/v1/responses")], "openai"
        else:
            return {"type": "error", "error": {"type": "not_found_error", "message": "no such route"}}
        with self.lock:
            script = self.scripts.get(key)
            if script is None:
                return {"type": "error", "error": {"type": "not_found_error", "message": f"no script {key}"}}
            script.requests.append(body)
            if script.answers:
                scripted = script.answers.pop(0)
            else:
                script.overruns += 1
                scripted = None
        if api == "anthropic":
            return self.message(body, scripted)
        return self.response(body, scripted)

    def message(self, body: dict, scripted: dict | None) -> dict:
        if scripted is None:
            scripted = {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}
        content = []
        for block in scripted.get("content", []):
            block = dict(block)
            if block.get("type") == "tool_use":
                block.setdefault("id", self.next_id("toolu_"))
                block.setdefault("input", {})
            content.append(block)
        return {
            "id": self.next_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-opus-5"),
            "content": content,
            "stop_reason": scripted.get("stop_reason", "end_turn"),
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def response(self, body: dict, scripted: dict | None) -> dict:
        if scripted is None:
            scripted = {"output": [{"type": "message", "text": "Done."}]}
        output = []
        for item in scripted.get("output", []):
            item = dict(item)
            kind = item.get("type")
            if kind == "message":
                item.setdefault("id", self.next_id("msg_"))
                item.setdefault("status", "completed")
                item.setdefault("role", "assistant")
                if "text" in item:
                    text = item.pop("text")
                    item["content"] = [{"type": "output_text", "text": text, "annotations": []}]
            elif kind == "computer_call":
                item.setdefault("id", self.next_id("cu_"))
                item.setdefault("call_id", self.next_id("call_"))
                item.setdefault("status", "completed")
                if "action" in item:
                    item.setdefault("pending_safety_checks", [])
            elif kind == "function_call":
                item.setdefault("id", self.next_id("fc_"))
                item.setdefault("call_id", self.next_id("call_"))
                item.setdefault("status", "completed")
                item.setdefault("arguments", "{}")
            elif kind == "reasoning":
                item.setdefault("id", self.next_id("rs_"))
                item.setdefault("summary", [])
            elif kind == "mcp_approval_request":
                item.setdefault("id", self.next_id("mcpr_"))
            output.append(item)
        status = scripted.get("status", "completed")
        return {
            "id": self.next_id("resp_"),
            "object": "response",
            "created_at": 1_700_000_000,
            "status": status,
            "error": None,
            "incomplete_details": {"reason": scripted.get("reason", "max_output_tokens")}
            if status == "incomplete"
            else None,
            "model": body.get("model", "computer-use-2"),
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 15,
            },
        }
