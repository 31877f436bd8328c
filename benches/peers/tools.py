"""One adapter per tool: open a page, locate a named control (a ref from the tool's own read),
act on it. Every answer's text is kept, as a model would read it; action calls are timed."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from mcp_stdio import StdioMcp

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "node_modules", ".bin")
CHROMIUM = os.environ.get("HANDS_BENCH_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")

# The roles of the targets, as each tool may spell them.
ROLE_ALIASES = {
    "textbox": ("textbox", "textarea", "searchbox", "text"),
    "combobox": ("combobox", "select", "listbox"),
    "checkbox": ("checkbox",),
    "button": ("button",),
    "link": ("link",),
}

QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def tools_roles(role):
    return ROLE_ALIASES[role]


class NotFound(Exception):
    pass


def find_ref(text, role, name, ref_of_line):
    """The ref of the line naming `name` exactly (the role preferred), or None."""
    fallback = None
    for line in text.splitlines():
        ref = ref_of_line(line)
        if not ref:
            continue
        names = QUOTED.findall(line)
        if not names or names[0].replace('\\"', '"').strip() != name:
            continue
        head = line.split('"', 1)[0].lower()
        if any(re.search(rf"\b{alias}\b", head) for alias in ROLE_ALIASES[role]):
            return ref
        fallback = fallback or ref
    return fallback


class Tool:
    """What every adapter records: (kind, text, seconds) per call."""

    name = "?"

    def __init__(self, workdir):
        self.workdir = workdir
        self.calls = []
        # `--locate remember`: the text of the last read, whose refs are used without reading
        # again, and how many actions on such a ref failed and were retried after a read.
        self.last_read = ""
        self.retries = 0

    def find_in(self, text, role, name):
        return find_ref(text, role, name, self._ref)

    def remembered(self, role, name):
        """A ref for the control from the last read, as a model would reuse it, or None."""
        return self.find_in(self.last_read, role, name) if self.last_read else None

    def record(self, kind, text, seconds):
        self.calls.append((kind, text, seconds))
        return text

    def act(self, step, ref):
        verb, role, name, arg = step[:4]
        started = time.time()
        text = self._act(verb, ref, arg, name)
        ended = time.time()
        self.record("action", text, ended - started)
        return started, ended, text

    def seen(self, probe, role, name):
        """Whether the read `probe` shows the control (`role`, `name`)."""
        return self.find_in(probe, role, name) is not None

    def probe(self):
        """A read of the page right after an action, as a model that reads at once gets it:
        (text, when it returned). Not one of the step's calls: not counted in tokens, and it
        leaves what the tool remembers of its reads alone."""
        text = self._probe()
        return text, time.time()

    def close(self):
        pass


class McpTool(Tool):
    """A tool served over MCP stdio."""

    def __init__(self, workdir, argv, env=None):
        super().__init__(workdir)
        self.mcp = StdioMcp(argv, env=env, log_path=os.path.join(workdir, f"{self.name}.log"))

    def call(self, kind, tool, args):
        started = time.time()
        text, is_error = self.mcp.call(tool, args)
        self.record(kind, text, time.time() - started)
        return text, is_error

    def close(self):
        self.mcp.close()

    def _probe_text(self, tool, args):
        text, _ = self.mcp.call(tool, args)
        return text


class Hands(McpTool):
    """hands keeps each element's ref from read to read of a document, and `browser_read_page`
    answers a re-read with what changed since the last one (`+`/`-`/`~` lines, a `~` line with
    only what changed). Like a model,
    the adapter keeps what its reads showed (ref -> kind and name) and brings it up to date from
    each answer; every step still re-reads (the page may have changed) before it looks the
    target up."""

    name = "hands"
    CHANGES = "Changes:"
    NO_CHANGES = "No changes since the last read."

    def __init__(self, workdir, hands_bin, base, locate):
        self.locate_mode = locate
        self.known = {}
        self.cursor = None
        # (index in `calls` of a read that sent what changed, the whole read of that moment):
        # the whole read is asked right after (`full: true`) to measure the changes against it,
        # and counted nowhere else.
        self.whole_reads = []
        super().__init__(
            workdir,
            [hands_bin, "mcp", "--browser", f"{base}/", "--allow-origin", base,
             "--approve", "all", "--sandbox", "none"],
            env={"RUST_LOG": os.environ.get("HANDS_BENCH_RUST_LOG", "warn")},
        )

    def open(self, url):
        self.call("open", "browser_navigate", {"url": url})
        self.known, self.cursor = {}, None

    # `[e12] button Sort by price`, `[e44] checkbox [ ] Subscribe`, `[e43] textbox Comment = ""`,
    # `[e9] combobox Country {France=FR, …}`, `[e7] button Skip (off-screen)`
    LINE = re.compile(r'^\s*\[(e\d+)\] (\S+) (?:\[[ x-]\] )?(.*?)(?: = ".*"| \{.*\})?(?: \(off-screen\))?$')
    # `*[e4] [x]`, `*[e1] = ""`, `*[e2] New name`: the ref and only what changed (the kind
    # never changes under one ref).
    CHANGED = re.compile(r'^\*\[(e\d+)\](?: \[[ x-]\])?(?: (?!= )(.*?))?(?: = .*| \{.*\})?(?: \((?:off|on)-screen\))?$')

    @classmethod
    def is_changes(cls, text):
        """Whether a read's answer is what changed since the last read: a header (when page
        text changed), or element lines marked `+[`, `-[`, `*[`."""
        return text.startswith((cls.CHANGES, cls.NO_CHANGES, "+[", "-[", "*["))

    def _absorb(self, text, whole):
        """Brings `known` up to date from a read's answer: a changes answer edits it, a whole
        read (`whole`: not a continuation) replaces it."""
        lines = text.splitlines()
        if self.is_changes(text):
            for line in lines:
                gone = re.match(r"^-\[(e\d+)\] ", line)
                if gone:
                    self.known.pop(gone.group(1), None)
                    continue
                changed = self.CHANGED.match(line)
                if changed and changed.group(1) in self.known:
                    if changed.group(2):
                        kind = self.known[changed.group(1)][0]
                        self.known[changed.group(1)] = (kind, changed.group(2).strip())
                    continue
                m = line.startswith("+[") and self.LINE.match(line[1:])
                if m:
                    self.known[m.group(1)] = (m.group(2), m.group(3).strip())
            return
        if whole:
            self.known = {}
            self.cursor = None
        for line in lines:
            m = self.LINE.match(line)
            if m:
                self.known[m.group(1)] = (m.group(2), m.group(3).strip())
        cursor = re.search(r'cursor "([^"]+)"', text)
        if cursor:
            self.cursor = cursor.group(1)
        elif not whole:
            self.cursor = None

    def _lookup(self, role, name):
        fallback = None
        for ref, (kind, label) in self.known.items():
            if label != name:
                continue
            if kind in tools_roles(role):
                return ref
            fallback = fallback or ref
        return fallback

    @classmethod
    def _find(cls, text, role, name):
        fallback = None
        for line in text.splitlines():
            m = cls.LINE.match(line)
            if not m or m.group(3).strip() != name:
                continue
            if m.group(2) in tools_roles(role):
                return m.group(1)
            fallback = fallback or m.group(1)
        return fallback

    def find_in(self, text, role, name):
        return self._find(text, role, name)

    def remembered(self, role, name):
        """`--locate remember`: the ref the reads so far gave the control (kept up to date from
        every answer), without reading again."""
        return self._lookup(role, name)

    def locate(self, role, name):
        if self.locate_mode in ("read", "remember"):
            text, _ = self.call("read", "browser_read_page", {"filter": "interactive"})
            self._absorb(text, whole=True)
            if self.is_changes(text) and not text.startswith(self.NO_CHANGES):
                whole, _ = self.mcp.call("browser_read_page", {"filter": "interactive", "full": True})
                self.whole_reads.append((len(self.calls) - 1, whole))
            ref = self._lookup(role, name)
            # The rest of a read cut at the budget, page by page, until the target is in it.
            while not ref and self.cursor:
                text, _ = self.call("read", "browser_read_page",
                                    {"filter": "interactive", "cursor": self.cursor})
                self._absorb(text, whole=False)
                ref = self._lookup(role, name)
            if ref:
                return ref
        text, _ = self.call("read", "browser_find", {"query": name})
        ref = self._find(text, role, name)
        if not ref:
            raise NotFound(text[-400:])
        return ref

    def _probe(self):
        # `filter: "all"` keeps its own last read, so the step reads (`"interactive"`) still
        # send what changed since the previous step's read.
        text = self._probe_text("browser_read_page", {"filter": "all", "full": True})
        # A read cut at the budget: its other pages (of the same read, no new one).
        pages = [text]
        cursor = re.search(r'cursor "([^"]+)"', text)
        while cursor:
            more = self._probe_text("browser_read_page", {"filter": "all", "cursor": cursor.group(1)})
            pages.append(more)
            cursor = re.search(r'cursor "([^"]+)"', more)
        return "\n".join(pages)

    def seen(self, probe, role, name):
        # A page of more elements than one read holds (`(omitted: …)`, the 2,000 controls) is
        # looked up past the cut with `browser_find`, after the read (so no earlier).
        if self._find(probe, role, name) is not None:
            return True
        if "(omitted" not in probe:
            return False
        return self._find(self._probe_text("browser_find", {"query": name}), role, name) is not None

    def _act(self, verb, ref, arg, name):
        if verb == "click":
            tool, args = "browser_click", {"target": ref}
        elif verb == "type":
            tool, args = "browser_type", {"target": ref, "text": arg}
        elif verb == "select":
            tool, args = "browser_select_option", {"target": ref, "values": [arg[0]]}
        else:
            tool, args = "browser_set_checked", {"target": ref, "checked": verb == "check"}
        text, is_error = self.mcp.call(tool, args)
        return ("ERROR " if is_error else "") + text


class PlaywrightMcp(McpTool):
    name = "playwright-mcp"

    def __init__(self, workdir, base, locate):
        self.locate_mode = locate
        super().__init__(
            workdir,
            [os.path.join(BIN, "playwright-mcp"), "--executable-path", CHROMIUM, "--headless",
             "--isolated", "--no-sandbox", "--output-dir", os.path.join(workdir, "pw-out")],
        )

    def open(self, url):
        self.call("open", "browser_navigate", {"url": url})

    @staticmethod
    def _ref(line):
        m = re.search(r"\[ref=([a-z0-9]+)\]", line)
        return m.group(1) if m else None

    def locate(self, role, name):
        if self.locate_mode == "find":
            text, _ = self.call("read", "browser_find", {"text": name})
        else:
            text, _ = self.call("read", "browser_snapshot", {})
            self.last_read = text
        ref = find_ref(text, role, name, self._ref)
        if not ref:
            raise NotFound(text[-400:])
        return ref

    def _probe(self):
        return self._probe_text("browser_snapshot", {})

    def _act(self, verb, ref, arg, name):
        if verb == "type":
            tool, args = "browser_type", {"element": name, "target": ref, "text": arg}
        elif verb == "select":
            tool, args = "browser_select_option", {"element": name, "target": ref, "values": [arg[1]]}
        else:
            tool, args = "browser_click", {"element": name, "target": ref}
        text, is_error = self.mcp.call(tool, args)
        return ("ERROR " if is_error else "") + text


class ChromeDevtoolsMcp(McpTool):
    name = "chrome-devtools-mcp"

    def __init__(self, workdir, base, locate):
        super().__init__(
            workdir,
            [os.path.join(BIN, "chrome-devtools-mcp"), "--executablePath", CHROMIUM, "--headless",
             "--isolated", "--chromeArg=--no-sandbox", "--no-usage-statistics",
             "--no-performance-crux"],
        )
        self.page_id = None

    def open(self, url):
        if self.page_id is None:
            text, _ = self.call("open", "list_pages", {})
            self.page_id = int(re.search(r"^(\d+):", text, re.M).group(1))
        self.call("open", "navigate_page", {"pageId": self.page_id, "type": "url", "url": url})

    @staticmethod
    def _ref(line):
        m = re.search(r"uid=(\S+)", line)
        return m.group(1) if m else None

    def locate(self, role, name):
        text, _ = self.call("read", "take_snapshot", {"pageId": self.page_id})
        self.last_read = text
        ref = find_ref(text, role, name, self._ref)
        if not ref:
            raise NotFound(text[-400:])
        return ref

    def _probe(self):
        return self._probe_text("take_snapshot", {"pageId": self.page_id})

    def _act(self, verb, ref, arg, name):
        if verb == "type":
            tool, args = "fill", {"pageId": self.page_id, "uid": ref, "value": arg}
        elif verb == "select":
            tool, args = "fill", {"pageId": self.page_id, "uid": ref, "value": arg[1]}
        else:
            tool, args = "click", {"pageId": self.page_id, "uid": ref}
        text, is_error = self.mcp.call(tool, args)
        return ("ERROR " if is_error else "") + text


class AgentBrowser(Tool):
    name = "agent-browser"

    def __init__(self, workdir, base, locate):
        super().__init__(workdir)
        self.binary = os.path.join(HERE, "node_modules", "agent-browser", "bin",
                                   "agent-browser-linux-x64")
        self.env = {
            **os.environ,
            "AGENT_BROWSER_EXECUTABLE_PATH": CHROMIUM,
            "AGENT_BROWSER_ARGS": "--no-sandbox",
            "AGENT_BROWSER_SESSION": f"hands-bench-{os.getpid()}",
            "AGENT_BROWSER_NO_VERSION_CHECK": "1",
            "HOME": workdir,
        }

    def run(self, *argv):
        done = subprocess.run([self.binary, *argv], env=self.env, cwd=self.workdir,
                              capture_output=True, text=True, timeout=120)
        text = done.stdout + done.stderr
        return ("ERROR " if done.returncode else "") + text

    def timed(self, kind, *argv):
        started = time.time()
        text = self.run(*argv)
        return self.record(kind, text, time.time() - started)

    def open(self, url):
        self.timed("open", "open", url)

    @staticmethod
    def _ref(line):
        m = re.search(r"ref=(e\d+)", line)
        return m.group(1) if m else None

    def locate(self, role, name):
        text = self.timed("read", "snapshot", "-i")
        self.last_read = text
        ref = find_ref(text, role, name, self._ref)
        if not ref:
            raise NotFound(text[-400:])
        return ref

    def _probe(self):
        return self.run("snapshot", "-i")

    def _act(self, verb, ref, arg, name):
        target = "@" + ref
        if verb == "type":
            return self.run("fill", target, arg)
        if verb == "select":
            return self.run("select", target, arg[0])
        if verb in ("check", "uncheck"):
            return self.run(verb, target)
        return self.run("click", target)

    def close(self):
        self.run("close")


def make(name, workdir, hands_bin, base, locate):
    if name == "hands":
        return Hands(workdir, hands_bin, base, locate)
    if name == "playwright-mcp":
        return PlaywrightMcp(workdir, base, locate)
    if name == "chrome-devtools-mcp":
        return ChromeDevtoolsMcp(workdir, base, locate)
    if name == "agent-browser":
        return AgentBrowser(workdir, base, locate)
    raise SystemExit(f"unknown tool {name}: give hands, playwright-mcp, chrome-devtools-mcp, agent-browser")


def scratch():
    return tempfile.mkdtemp(prefix="hands-bench-peers-")


def dump(path, tool):
    with open(path, "w") as f:
        for kind, text, seconds in tool.calls:
            f.write(json.dumps({"kind": kind, "ms": round(seconds * 1000, 1), "text": text}) + "\n")
