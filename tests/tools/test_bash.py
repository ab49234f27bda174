from __future__ import annotations

import itertools
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from proc_table import pid_alive
from rpc_agent.tools import bash as bash_module
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput
from rpc_agent.tools.bash import BashArgs, BashTool
from rpc_agent.tools.temp_files import TempFiles
from tools.conftest import Updates
from tools.helpers import text_of

pytestmark = pytest.mark.anyio

# An inner bash (a child of the tool's bash) with a sleep of its own (a grandchild); prints both pids.
TREE = "bash -c 'sleep 300 & echo \"pids $$ $!\"; wait'; echo unreachable"


async def run(ctx: ToolContext, command: str, **args: Any) -> ToolOutput:
    return await BashTool().execute(BashArgs(command=command, **args), ctx)


def tree_pids(text: str) -> list[int]:
    for line in text.splitlines():
        if line.startswith("pids "):
            return [int(part) for part in line.split()[1:]]
    return []


async def wait_gone(pids: list[int]) -> list[int]:
    """The pids still running after a bounded wait for them to go."""
    with anyio.move_on_after(10):
        while any(pid_alive(pid) for pid in pids):  # noqa: ASYNC110 (nothing to wait on but /proc)
            await anyio.sleep(0.02)
    return [pid for pid in pids if pid_alive(pid)]


async def test_output_and_exit_code(ctx: ToolContext) -> None:
    out = await run(ctx, "echo hello; echo oops >&2")
    assert text_of(out) == "hello\noops"
    assert not out.is_error
    assert out.details == {"exitCode": 0, "truncated": False, "fullOutputPath": None, "timedOut": False}


async def test_runs_in_the_session_cwd(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("")
    out = await run(ctx, "pwd; ls")
    assert text_of(out) == f"{tmp_path}\nmarker.txt"


async def test_stdin_is_closed(ctx: ToolContext) -> None:
    out = await run(ctx, "cat; echo done")
    assert text_of(out) == "done"


async def test_nonzero_exit_is_an_error_with_the_code(ctx: ToolContext) -> None:
    out = await run(ctx, "echo partial; exit 3")
    assert out.is_error
    assert text_of(out) == "partial\n\nCommand exited with code 3."
    assert out.details["exitCode"] == 3


async def test_killed_by_signal(ctx: ToolContext) -> None:
    out = await run(ctx, "kill -9 $$")
    assert out.is_error
    assert "killed by signal 9" in text_of(out)
    assert out.details["exitCode"] == -9


async def test_no_output(ctx: ToolContext) -> None:
    assert text_of(await run(ctx, "true")) == "(no output)"


async def test_non_utf8_output_is_replaced(ctx: ToolContext) -> None:
    out = await run(ctx, r"printf 'caf\xe9 \xff\xfe ok\n'")
    assert text_of(out) == "caf\ufffd \ufffd\ufffd ok"


async def test_streams_growing_output(ctx: ToolContext, tmp_path: Path, updates: Updates) -> None:
    # The command waits until the tool has reported its first line, so the test does not
    # depend on timing: an update must arrive while the command is still running.
    go = tmp_path / "go"

    def on_update(output: ToolOutput) -> None:
        updates(output)
        if "first" in text_of(output):
            go.touch()

    ctx.on_update = on_update
    out = await run(ctx, "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second")
    assert text_of(out) == "first\nsecond"
    texts = updates.texts
    assert texts[0] == "first"
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    assert len(set(texts)) == len(texts)  # an update only when there is something new
    assert all(output.is_error is False for output in updates.outputs)


async def test_timeout_kills_the_process_tree(ctx: ToolContext) -> None:
    out = await run(ctx, TREE, timeout=0.5)
    pids = tree_pids(text_of(out))
    assert len(pids) == 2
    assert await wait_gone(pids) == []
    assert out.is_error
    assert out.details["timedOut"] is True
    assert "timed out after 0.5 seconds" in text_of(out)
    assert "unreachable" not in text_of(out)


async def test_cancellation_kills_the_group_and_propagates(ctx: ToolContext) -> None:
    pids: list[int] = []
    propagated = False
    finished = False
    with anyio.CancelScope() as scope:

        def on_update(output: ToolOutput) -> None:
            pids.extend(tree_pids(text_of(output)))
            if pids:
                scope.cancel()

        ctx.on_update = on_update
        try:
            await run(ctx, TREE)
            finished = True
        except anyio.get_cancelled_exc_class():
            propagated = True
            raise
    assert scope.cancelled_caught
    assert propagated
    assert not finished
    assert len(pids) == 2
    assert await wait_gone(pids) == []


async def test_output_truncated_by_lines_with_full_output_file(ctx: ToolContext) -> None:
    out = await run(ctx, "seq 1 5000")
    text = text_of(out)
    body, note = text.split("\n\n")
    assert body.splitlines() == [str(i) for i in range(3001, 5001)]
    assert "lines 3001-5000 of 5000" in note
    details = out.details
    assert details["truncated"] is True
    path = Path(details["fullOutputPath"])
    assert str(path) in note
    assert path.read_text() == "".join(f"{i}\n" for i in range(1, 5001))
    path.unlink()


async def test_output_truncated_by_bytes(ctx: ToolContext) -> None:
    out = await run(ctx, "for i in $(seq 1 1000); do printf '%099d\\n' $i; done")
    body, note = text_of(out).split("\n\n")
    lines = body.splitlines()
    assert len(body.encode()) <= 50 * 1024
    assert lines[-1] == f"{1000:099d}"
    assert len(lines) == 512  # 512 lines of 100 bytes fit in 50KB
    assert "of 97.7KB" in note
    Path(out.details["fullOutputPath"]).unlink()


async def test_one_huge_line_keeps_its_end(ctx: ToolContext) -> None:
    out = await run(ctx, "head -c 200000 /dev/zero | tr '\\0' x; echo END")
    body, note = text_of(out).split("\n\n")
    assert body.endswith("xEND")
    assert len(body) == 50 * 1024
    assert "the end of line 1" in note
    assert os.path.getsize(out.details["fullOutputPath"]) == 200004
    Path(out.details["fullOutputPath"]).unlink()


async def test_truncated_nonzero_exit_has_both_notes(ctx: ToolContext) -> None:
    out = await run(ctx, "seq 1 3000; exit 7")
    assert out.is_error
    assert text_of(out).endswith("Command exited with code 7.")
    assert "Output truncated" in text_of(out)
    Path(out.details["fullOutputPath"]).unlink()


async def test_background_process_does_not_hang_the_tool(ctx: ToolContext) -> None:
    out = await run(ctx, "sleep 30 & echo $!")
    pid = int(text_of(out).splitlines()[0])
    try:
        assert out.details["exitCode"] == 0
        assert "background process" in text_of(out)
    finally:
        os.kill(pid, signal.SIGKILL)


async def test_missing_cwd(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path / "gone", tool_call_id="c")
    with pytest.raises(ToolError, match="does not exist"):
        await run(ctx, "true")


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"command": 5},
        {"command": ""},
        {"command": "ls", "timeout": 0},
        {"command": "ls", "timeout": "soon"},
    ],
)
def test_argument_validation(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BashArgs.model_validate(args)


async def test_full_output_file_stops_at_its_cap(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bash_module, "FULL_OUTPUT_CAP", 1_000_000)
    out = await run(ctx, "head -c 3000000 /dev/zero | tr '\\0' x; echo END")
    body, note = text_of(out).split("\n\n")
    assert body.endswith("xEND")  # the tail shown is the real end
    path = Path(out.details["fullOutputPath"])
    assert path.stat().st_size == 1_000_000
    assert f"The first 976.6KB of the output were saved to {path}; the rest was not kept" in note
    assert "of 2.9MB" in note


async def test_full_output_files_belong_to_the_context_registry(tmp_path: Path) -> None:
    files = TempFiles()
    ctx = ToolContext(cwd=tmp_path, tool_call_id="c", temp_files=files)
    kept = Path((await run(ctx, "seq 1 5000")).details["fullOutputPath"])
    assert (await run(ctx, "seq 1 10")).details["fullOutputPath"] is None
    assert len(files) == 1
    assert kept.exists()
    files.remove_all()
    assert not kept.exists()


@pytest.mark.parametrize(
    "anyio_backend",
    [
        pytest.param(("asyncio", {"use_uvloop": False}), id="asyncio"),
        pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop"),
    ],
)
async def test_a_detached_background_job_holds_nothing_of_ours(ctx: ToolContext) -> None:
    out = await run(ctx, "sleep 30 </dev/null >/dev/null 2>&1 & echo $!; ls /proc/$$/fd")
    pid, *fds = text_of(out).splitlines()
    try:
        assert out.details["exitCode"] == 0
        assert "background process" not in text_of(out)  # the job did not keep the output open
        assert sorted(fds) == ["0", "1", "2", "3"]  # stdio, and the directory ls is listing
        # Right after the fork the job is still bash, and while sleep is being loaded ld.so
        # holds libc open: look until the job has settled.
        fds_of_job: list[str] = []
        for _ in range(500):  # /proc has nothing to wait on: look again a little later
            fds_of_job = sorted(os.listdir(f"/proc/{pid}/fd"))
            if fds_of_job == ["0", "1", "2"]:
                break
            await anyio.sleep(0.01)
        assert fds_of_job == ["0", "1", "2"]
    finally:
        os.kill(int(pid), signal.SIGKILL)
