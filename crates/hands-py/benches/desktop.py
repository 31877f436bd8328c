"""Speed, side by side: the same scripted 20-action desktop task through the openai SDK's
ComputerToolset, once with hands' driver and once with the driver a Python user would write
(one xdotool process per action, mss for the screenshot, PNG + base64, and the usual sleep before
the screenshot), on the same real Xvfb desktop with a real editor. Prints both and the ratio.

    python crates/hands-py/benches/desktop.py [--rounds 3] [--sleep 0.5]

Not a test: the numbers depend on the machine; run it on a quiet one with a release build
(`maturin build --release`, see the README).
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import subprocess
import time
from typing import Any, Dict, List

import mss
import mss.tools
from openai.lib.computer import ComputerToolset
from openai.types.responses import ResponseComputerToolCall

import hands.sync
from hands.openai import ComputerDriver

#: Five calls of four actions each: the 20 actions of the task.
CALLS: List[List[Dict[str, Any]]] = [
    [{"type": "click", "button": "left", "x": 640, "y": 420},
     {"type": "type", "text": "hands bench line one"},
     {"type": "keypress", "keys": ["ENTER"]},
     {"type": "move", "x": 300, "y": 300}],
    [{"type": "type", "text": "second line"},
     {"type": "keypress", "keys": ["CTRL", "A"]},
     {"type": "keypress", "keys": ["DELETE"]},
     {"type": "double_click", "x": 640, "y": 420}],
    [{"type": "scroll", "x": 640, "y": 420, "scroll_x": 0, "scroll_y": 200},
     {"type": "type", "text": "third"},
     {"type": "move", "x": 700, "y": 450},
     {"type": "click", "button": "left", "x": 650, "y": 430}],
    [{"type": "keypress", "keys": ["END"]},
     {"type": "type", "text": " and more"},
     {"type": "drag", "path": [{"x": 600, "y": 420}, {"x": 700, "y": 420}]},
     {"type": "keypress", "keys": ["CTRL", "Z"]}],
    [{"type": "type", "text": "last line"},
     {"type": "keypress", "keys": ["ENTER"]},
     {"type": "move", "x": 100, "y": 100},
     {"type": "wait"}],
]


class XdotoolDriver:
    """What a Python user writes: xdotool per action, mss screenshot, a fixed sleep."""

    def __init__(self, display: str, sleep: float) -> None:
        self.env = {**os.environ, "DISPLAY": display}
        self.sleep = sleep
        self.grabber = mss.MSS(display=display)

    def _x(self, *args: str) -> None:
        subprocess.run(["xdotool", *args], env=self.env, check=True)

    def click(self, action: Any) -> None:
        button = {"left": "1", "middle": "2", "right": "3"}[action.button]
        self._x("mousemove", str(action.x), str(action.y), "click", button)

    def double_click(self, action: Any) -> None:
        self._x("mousemove", str(action.x), str(action.y), "click", "--repeat", "2", "1")

    def drag(self, action: Any) -> None:
        first, *rest = action.path
        args = ["mousemove", str(first.x), str(first.y), "mousedown", "1"]
        for point in rest:
            args += ["mousemove", str(point.x), str(point.y)]
        self._x(*args, "mouseup", "1")

    def keypress(self, action: Any) -> None:
        names = {"CTRL": "ctrl", "ENTER": "Return", "DELETE": "Delete", "END": "End", "A": "a", "Z": "z"}
        self._x("key", "+".join(names.get(k, k) for k in action.keys))

    def move(self, action: Any) -> None:
        self._x("mousemove", str(action.x), str(action.y))

    def scroll(self, action: Any) -> None:
        clicks = max(1, abs(action.scroll_y) // 100)
        self._x("mousemove", str(action.x), str(action.y), "click", "--repeat", str(clicks),
                "5" if action.scroll_y > 0 else "4")

    def type(self, action: Any) -> None:
        self._x("type", "--", action.text)

    def wait(self, action: Any) -> None:
        time.sleep(1.0)

    def screenshot(self) -> Dict[str, Any]:
        time.sleep(self.sleep)  # let the screen settle, the usual way
        shot = self.grabber.grab(self.grabber.monitors[0])
        png = mss.tools.to_png(shot.rgb, shot.size)
        return {"type": "computer_screenshot",
                "image_url": "data:image/png;base64," + base64.b64encode(png).decode()}


def call(index: int, actions: List[Dict[str, Any]]) -> ResponseComputerToolCall:
    return ResponseComputerToolCall.model_validate({
        "id": f"cu_{index}", "call_id": f"call_{index}", "type": "computer_call", "status": "completed",
        "pending_safety_checks": [], "actions": actions})


def run_task(toolset: ComputerToolset) -> float:
    started = time.perf_counter()
    for index, actions in enumerate(CALLS):
        output = toolset.execute(call(index, actions))
        assert output["output"]["image_url"].startswith("data:image/png;base64,")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sleep", type=float, default=0.5, help="the reference driver's sleep before a screenshot")
    args = parser.parse_args()
    times: Dict[str, List[float]] = {"hands": [], "xdotool+mss": []}
    with hands.sync.Desktop.spawn(1280, 800) as desktop:
        desktop.launch("openbox")
        desktop.launch("mousepad", "--disable-server")
        assert desktop.wait_for_window(20.0)
        time.sleep(1.0)  # let the editor finish starting, once, outside the measurement
        drivers = {"hands": ComputerToolset(ComputerDriver(desktop)),
                   "xdotool+mss": ComputerToolset(XdotoolDriver(desktop.display, args.sleep))}
        for _ in range(args.rounds):
            for name, toolset in drivers.items():
                times[name].append(run_task(toolset))
    actions = sum(len(c) for c in CALLS)
    print(f"desktop task: {actions} actions in {len(CALLS)} computer_calls through openai's ComputerToolset, "
          f"median of {args.rounds}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<12} {median:7.3f} s   {median / actions * 1e3:7.1f} ms/action")
    ratio = statistics.median(times["xdotool+mss"]) / statistics.median(times["hands"])
    print(f"  hands is {ratio:.1f}x faster (reference sleeps {args.sleep} s before each screenshot; "
          f"with no sleep at all run --sleep 0)")


if __name__ == "__main__":
    main()
