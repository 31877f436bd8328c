"""A pool of hands workers on a Ray cluster: each actor runs one ``hands worker`` process
(the ``hands`` binary, as a subprocess) against the fleet's PostgreSQL ledger, with ``slots``
episodes at once. Ray places and restarts the actors; exactly once is the ledger's: every
save checks the episode's lease epoch, so an actor that Ray re-runs while its predecessor
still acts cannot act on the same episode twice.

    import ray
    from hands.ray import WorkerPool

    ray.init()
    pool = WorkerPool("postgres://hands@db/hands", actors=4, slots=2,
                      extra_args=["--sandbox", "none"])
    pool.start()
    print(pool.status())
    pool.wait()          # with until_done=True: until the queued episodes are done
    pool.stop()

Submit the episodes first with ``hands batch submit TASKS.jsonl --ledger URL``. Needs the
``ray`` package (not a dependency of hands): ``pip install ray``.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import time
from collections import deque
from pathlib import Path
from threading import Thread
from typing import Any, Deque, Dict, List, Mapping, Optional, Sequence

import ray

__all__ = ["WorkerPool", "WorkerProcess", "find_hands_binary"]

_PR_SET_PDEATHSIG = 1
# Resolved before any fork: the child runs only this call between fork and exec.
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent() -> None:
    """In the forked child: SIGKILL when the actor's process dies, so a worker never outlives
    its actor (its episodes' leases lapse and another worker takes them over)."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def find_hands_binary(given: Optional[str] = None) -> str:
    """The ``hands`` binary: ``given``, else ``$HANDS_BINARY``, else ``hands`` on ``PATH``."""
    path = given or os.environ.get("HANDS_BINARY") or shutil.which("hands")
    if not path or not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"no hands binary (given {given!r}, HANDS_BINARY={os.environ.get('HANDS_BINARY')!r}, "
            "none on PATH): build it with `cargo build --release -p hands` and pass its path"
        )
    return str(Path(path).resolve())


class WorkerProcess:
    """One ``hands worker`` process, started and watched by a Ray actor (see
    :class:`WorkerPool`); usable without Ray too."""

    def __init__(self, command: Sequence[str], env: Optional[Mapping[str, str]] = None) -> None:
        self._command = list(command)
        self._env = dict(os.environ, **(env or {}))
        self._process: Optional[subprocess.Popen] = None
        self._log: Deque[str] = deque(maxlen=200)
        self._reader: Optional[Thread] = None
        self._started_at = 0.0

    def start(self) -> int:
        """Starts the process (again, if it ended); returns its pid."""
        if self._process is not None and self._process.poll() is None:
            return self._process.pid
        self._process = subprocess.Popen(
            self._command, env=self._env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
            preexec_fn=_die_with_parent)
        self._started_at = time.monotonic()
        process = self._process

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self._log.append(line.rstrip("\n"))

        self._reader = Thread(target=read, daemon=True)
        self._reader.start()
        return process.pid

    def status(self) -> Dict[str, Any]:
        """``{"running", "pid", "returncode", "seconds", "log"}``: the last lines it printed."""
        process = self._process
        return {
            "running": process is not None and process.poll() is None,
            "pid": process.pid if process else None,
            "returncode": process.poll() if process else None,
            "seconds": time.monotonic() - self._started_at if process else 0.0,
            "log": list(self._log)[-20:],
        }

    def wait(self, timeout: Optional[float] = None) -> Optional[int]:
        """Waits for the process to end (None: not ended within ``timeout`` seconds)."""
        if self._process is None:
            return None
        try:
            code = self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        if self._reader is not None:
            self._reader.join(5)
        return code

    def stop(self, grace: float = 10.0) -> Optional[int]:
        """SIGTERM, then SIGKILL after ``grace`` seconds; its episodes' leases lapse and other
        workers take them over."""
        process = self._process
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return self.wait(5)


class WorkerPool:
    """``actors`` Ray actors, each running ``hands worker --ledger LEDGER --slots SLOTS``.

    ``run_dir`` is where each actor's episodes' run directories go (``run_dir/<name>``, on the
    actor's node); ``until_done`` makes the workers exit once nothing is queued or running;
    ``extra_args`` go after the worker's own (``["--sandbox", "none"]``, ``["--approve",
    "none"]``); ``env`` is added to the workers' environment (the provider's API key);
    ``actor_options`` go to Ray (default ``{"num_cpus": slots}``)."""

    def __init__(
        self,
        ledger: str,
        *,
        actors: int = 1,
        slots: int = 1,
        lease: float = 30.0,
        run_dir: str = "runs/fleet",
        until_done: bool = False,
        hands_binary: Optional[str] = None,
        extra_args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        actor_options: Optional[Mapping[str, Any]] = None,
        name: str = "ray",
    ) -> None:
        if actors < 1 or slots < 1:
            raise ValueError(f"a pool needs at least one actor and one slot (got {actors}, {slots})")
        self._binary = find_hands_binary(hands_binary)
        self._ledger = ledger
        self._actors_wanted = actors
        self._slots = slots
        self._lease = lease
        self._run_dir = run_dir
        self._until_done = until_done
        self._extra = list(extra_args)
        self._env = dict(env or {})
        self._options = dict(actor_options or {"num_cpus": slots})
        self._name = name
        self._actors: List[Any] = []

    def _command(self, index: int) -> List[str]:
        name = f"{self._name}-{index}"
        command = [self._binary, "worker", "--ledger", self._ledger, "--slots", str(self._slots),
                   "--lease", str(self._lease), "--name", name,
                   "--dir", str(Path(self._run_dir) / name)]
        if self._until_done:
            command.append("--until-done")
        return command + self._extra

    def start(self) -> List[int]:
        """Creates the actors and starts their workers; returns the workers' pids."""
        if self._actors:
            raise RuntimeError("the pool is already started: stop() it first")
        actor = ray.remote(WorkerProcess).options(**self._options)
        self._actors = [actor.remote(self._command(i), self._env)
                        for i in range(self._actors_wanted)]
        return ray.get([a.start.remote() for a in self._actors])

    def status(self) -> List[Dict[str, Any]]:
        """Each worker's :meth:`WorkerProcess.status`."""
        return ray.get([a.status.remote() for a in self._actors])

    def wait(self, timeout: Optional[float] = None) -> List[Optional[int]]:
        """Waits for every worker to exit (with ``until_done``); each one's exit code, None
        for one still running after ``timeout`` seconds."""
        return ray.get([a.wait.remote(timeout) for a in self._actors])

    def stop(self, grace: float = 10.0) -> List[Optional[int]]:
        """Stops the workers (SIGTERM, then SIGKILL after ``grace`` s) and the actors."""
        if not self._actors:
            return []
        codes = ray.get([a.stop.remote(grace) for a in self._actors])
        for a in self._actors:
            ray.kill(a)
        self._actors = []
        return codes

    def __enter__(self) -> "WorkerPool":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
