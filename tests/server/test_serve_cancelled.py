"""``serve()`` cancelled by whoever runs it (no EOF, no signal, no ``shutdown``: a host that
embeds the server and drops it) still ends what its tools started: the reaper that watches their
process groups does not run on without it."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from e2e.conftest import WAIT, RawServer
from e2e.inprocess import RawTask, serve_in_task
from proc_table import processes_running
from rpc_agent.tools import reaper

pytestmark = pytest.mark.anyio


def reapers_of_this_process() -> list[int]:
    """The children of this process that run the reaper's script."""
    return processes_running(reaper._SCRIPT, parent=os.getpid())


async def test_a_cancelled_serve_leaves_no_reaper_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["--provider", "faux", "--no-session"]
    async with serve_in_task(argv, tmp_path / "server.stderr", kind=RawTask) as task:
        server = RawServer(task)
        with anyio.fail_after(WAIT):
            answer = await server.call("bash", {"command": "echo hi"})
        assert answer["result"]["output"] == "hi"
        assert len(reapers_of_this_process()) == 1  # the first command started it
        task.kill()  # serve() cancelled where it waits, as a host dropping it would
    assert task.returncode is not None
    assert reapers_of_this_process() == []
