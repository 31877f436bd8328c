"""A minimal MCP client over stdio (newline-delimited JSON-RPC), enough to call tools and keep
the text each answer carried: the benchmark counts what a model would read."""

import json
import os
import subprocess
import threading


class McpError(Exception):
    pass


class StdioMcp:
    def __init__(self, argv, env=None, log_path=None):
        self.stderr = open(log_path, "wb") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env={**os.environ, **(env or {})},
        )
        self.next_id = 0
        self.lock = threading.Lock()
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "hands-bench-peers", "version": "0"},
            },
            timeout=60,
        )
        self.notify("notifications/initialized", {})

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params, timeout=60):
        with self.lock:
            self.next_id += 1
            my_id = self.next_id
            self._send({"jsonrpc": "2.0", "id": my_id, "method": method, "params": params})
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    raise McpError(f"the server exited during {method}")
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if message.get("id") != my_id:
                    if "method" in message and "id" in message:
                        # A request from the server (roots, elicitation…): decline it.
                        self._send(
                            {
                                "jsonrpc": "2.0",
                                "id": message["id"],
                                "error": {"code": -32601, "message": "not supported"},
                            }
                        )
                    continue
                if "error" in message:
                    raise McpError(json.dumps(message["error"]))
                return message["result"]

    def tools(self):
        return self.request("tools/list", {})["tools"]

    def call(self, name, arguments):
        """Calls a tool; returns (text of the answer, is_error)."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        parts = []
        for item in result.get("content", []):
            if item.get("type") == "text":
                parts.append(item["text"])
            elif item.get("type") == "image":
                parts.append("[image]")
            elif item.get("type") == "resource":
                parts.append(json.dumps(item["resource"]))
        if not parts and "structuredContent" in result:
            parts.append(json.dumps(result["structuredContent"]))
        return "\n".join(parts), bool(result.get("isError"))

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
