"""hands.ray on a real local Ray head: a pool of 2 actors, each running `hands worker --slots 2`
(the hands binary: $HANDS_BINARY, which scripts/test-python builds), against a private
PostgreSQL (initdb + pg_ctl on a temporary directory) and the model-API stand-in; a batch of 4
scripted desktop tasks, each appending its number once, is seen finished by `hands batch status`.
Skipped only when HANDS_SKIP_RAY=1 says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from hands import testing

if os.environ.get("HANDS_SKIP_RAY") == "1":
    pytest.skip("HANDS_SKIP_RAY=1: the Ray pool's test is skipped", allow_module_level=True)

import ray  # noqa: E402

from hands.ray import WorkerPool, find_hands_binary  # noqa: E402

PG_BIN = Path("/usr/lib/postgresql/15/bin")


@pytest.fixture
def ledger() -> Iterator[str]:
    """A private PostgreSQL on a unix socket; its connection string."""
    assert (PG_BIN / "initdb").exists(), "PostgreSQL 15 is needed: run scripts/install-system-deps.sh"
    root = Path(tempfile.mkdtemp(prefix="hands-pg-"))
    prefix = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: as Debian's `postgres` user
        shutil.chown(root, "postgres", "postgres")
        prefix = ["setpriv", "--reuid", "postgres", "--regid", "postgres", "--init-groups", "--"]
    data = root / "data"
    subprocess.run(prefix + [str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres",
                             "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"],
                   check=True, capture_output=True)
    subprocess.run(prefix + [str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(root / "log"),
                             "-o", f"-c listen_addresses='' -k {root} -c fsync=off", "-w", "start"],
                   check=True, capture_output=True)
    try:
        yield f"host={root} user=postgres dbname=postgres"
    finally:
        subprocess.run(prefix + [str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate",
                                 "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def answered(request: Dict[str, Any]) -> int:
    return sum(1 for m in request["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result")


def first_text(request: Dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content)


def test_a_ray_pool_of_two_actors_runs_a_batch_of_four(ledger: str, tmp_path: Path) -> None:
    binary = find_hands_binary()
    effects = tmp_path / "effects.txt"

    def policy(request: Dict[str, Any]) -> Dict[str, Any]:
        if answered(request) == 0:
            n = first_text(request).split()[-1]
            return {"blocks": [{"type": "tool_use", "name": "bash",
                                "input": {"command": f"echo {n} >> {effects}"}}]}
        return {"text": "Done."}

    with testing.Sim(policy) as sim:
        env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": sim.anthropic_base_url}
        tasks = tmp_path / "tasks.jsonl"
        tasks.write_text("\n".join(json.dumps(
            {"prompt": f"Append the line {n}", "environment": {"kind": "desktop"},
             "max_steps": 4, "check": f"grep -qx {n} {effects}"}) for n in range(1, 5)))
        hands_env = {k: v for k, v in os.environ.items() if k != "DISPLAY"} | env
        subprocess.run([binary, "batch", "submit", "--ledger", ledger, str(tasks)],
                       env=hands_env, check=True, capture_output=True)

        started = time.monotonic()
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
        head = time.monotonic() - started
        try:
            pool = WorkerPool(ledger, actors=2, slots=2, lease=5, until_done=True,
                              run_dir=str(tmp_path / "runs"), hands_binary=binary,
                              extra_args=["--sandbox", "none"], env=env)
            pids = pool.start()
            try:
                assert len(set(pids)) == 2, pids
                codes = pool.wait(timeout=240)
                said = "\n".join(line for s in pool.status() for line in s["log"])
                assert codes == [0, 0], said
                assert all(not s["running"] for s in pool.status())
            finally:
                pool.stop()
        finally:
            ray.shutdown()
        ran = time.monotonic() - started - head
        print(f"ray head {head:.1f} s; 4 episodes by 2 actors in {ran:.1f} s")

        assert sorted(effects.read_text().split()) == ["1", "2", "3", "4"], said
        # Both actors' workers ran.
        assert "hands worker ray-0:" in said and "hands worker ray-1:" in said, said
        status = subprocess.run([binary, "batch", "status", "--ledger", ledger, "--json"],
                                env=hands_env, check=True, capture_output=True, text=True)
        shown = subprocess.run([binary, "batch", "status", "--ledger", ledger],
                               env=hands_env, check=True, capture_output=True, text=True).stdout
        assert "4 episodes: 0 queued, 0 running, 4 finished" in shown, shown
        assert "success: 4 of 4 done (100.0%)" in shown, shown
        assert json.loads(status.stdout), status.stdout
        assert not sim.violations(), sim.violations()


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_pools_workers_stop_with_it_and_die_with_their_actor(ledger: str, tmp_path: Path) -> None:
    binary = find_hands_binary()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        pool = WorkerPool(ledger, actors=2, slots=1, lease=5, run_dir=str(tmp_path / "runs"),
                          hands_binary=binary, extra_args=["--sandbox", "none"])
        pids = pool.start()
        deadline = time.monotonic() + 30
        while not all("slot(s)" in " ".join(s["log"]) for s in pool.status()):
            assert time.monotonic() < deadline, pool.status()
            time.sleep(0.2)
        assert all(s["running"] for s in pool.status())
        # An actor killed by Ray takes its worker with it.
        ray.kill(pool._actors[1])
        deadline = time.monotonic() + 30
        while alive(pids[1]):
            assert time.monotonic() < deadline, f"worker {pids[1]} outlived its actor"
            time.sleep(0.2)
        assert alive(pids[0])
        # stop() ends the other (SIGTERM).
        codes = ray.get([pool._actors[0].stop.remote(10.0)])
        assert codes[0] is not None
        assert not alive(pids[0])
    finally:
        ray.shutdown()
