"""``rpc-agent batch --ray`` on a local Ray instance that the test starts (``ray.init(num_cpus=2)``).

Starting Ray takes seconds, so the module starts it once; the batch joins the instance this
process already runs (as a driver script on a cluster would) and leaves it up. When the module
is done, Ray is shut down, and nothing it started may be left: no process, no thread.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batch.batch_testlib import Batch, script, session_header
from proc_table import processes_running
from rpc_agent.batch.tasks import BatchTask
from rpc_agent.batch.worker import WorkerOptions, run_task

ray = pytest.importorskip("ray")

WAIT = 60.0


@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local Ray of two CPUs; yields the agent home its workers' runs use."""
    home = tmp_path_factory.mktemp("ray-agent-home")
    threads = set(threading.enumerate())
    # Ray's sockets live under its temp folder, whose path must stay short (a socket's path is
    # at most 107 bytes): not under pytest's deep tmp_path.
    temp = Path(tempfile.mkdtemp(prefix="rpc-ray-", dir="/tmp"))
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _temp_dir=str(temp),
        runtime_env={"env_vars": {"RPC_AGENT_HOME": str(home)}},
    )
    try:
        yield home
    finally:
        ray.shutdown()
        assert processes_running(str(temp)) == []
        assert {t for t in threading.enumerate() if t.is_alive()} <= threads
        subprocess.run(["rm", "-rf", str(temp)], check=False)


RAY_TASKS = 5
"""More tasks than the instance's two CPUs run at a time: some wait for a free one."""


def test_more_tasks_than_cpus_run_as_ray_tasks(ray_instance: Path, tmp_path: Path) -> None:
    batch = Batch(tmp_path)
    folder = batch.folder("work")
    tasks: list[dict[str, Any]] = [
        {"id": f"t{n:02d}", "prompt": f"ray task {n}", "cwd": "work"} for n in range(RAY_TASKS)
    ]
    tasks.append({"id": "no-repo", "prompt": "go", "repo": str(tmp_path / "nothing-here"), "ref": "main"})
    batch.write_tasks(tasks)
    code, stderr = batch.run("--ray")
    assert code == 1, stderr
    results = batch.by_id()
    assert len(results) == RAY_TASKS + 1
    for n in range(RAY_TASKS):
        line = results[f"t{n:02d}"]
        assert line["status"] == "done", line
        assert line["result"]["text"] == f"Echo: ray task {n}"
        assert session_header(line["sessionFile"])["cwd"] == str(folder)
    assert results["no-repo"]["status"] == "failed"
    assert results["no-repo"]["reason"] == f"no repository at {tmp_path / 'nothing-here'}"
    assert "on Ray, 2 task(s) at a time" in stderr
    assert ray.is_initialized()  # joined, not shut down: the instance is the test's


def test_a_cancelled_ray_task_interrupts_its_run(ray_instance: Path, tmp_path: Path) -> None:
    """What Ctrl-C of a batch on Ray does to a task in flight: ``ray.cancel``."""
    batch = Batch(tmp_path)
    slow = batch.folder("slow", "hang-here")
    replies = batch.script_file(script(sleep="29.9792"))
    options = WorkerOptions(provider="faux", faux_script=str(replies), session_dir=str(batch.sessions))
    remote = ray.remote(num_cpus=1, max_retries=0)(run_task)
    ref = remote.remote(BatchTask(id="slow", prompt="go", cwd=str(slow)), options)
    deadline = time.monotonic() + WAIT
    while not processes_running("sleep 29.9792") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_running("sleep 29.9792")
    ray.cancel(ref)
    with pytest.raises(ray.exceptions.TaskCancelledError):
        ray.get(ref, timeout=WAIT)
    assert processes_running("sleep 29.9792") == []
    (session,) = batch.sessions.glob("*.jsonl")
    last = json.loads(session.read_text().splitlines()[-1])["message"]
    assert last["role"] == "toolResult"  # the run was interrupted, not killed: it stored its turn
    assert last["content"][0]["text"] == "Tool execution was aborted"


def test_the_library_does_not_import_ray() -> None:
    code = (
        "import sys, rpc_agent.cli, rpc_agent.batch.command, rpc_agent.batch.runners; "
        "assert 'ray' not in sys.modules, 'ray imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
