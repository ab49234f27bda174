"""Checkpoints across session files and processes: fork and clone carry the states of the
entries they copy, ``-p`` checkpoints, ``rpc-agent rewind`` restores from the command line and
survives ``kill -9`` (a real process, killed mid-restore: the point is the crash), and deleting
a session frees its states."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from e2e.conftest import E2E, JsonDict, current_file, header_and_entries, messages_of
from e2e.test_checkpoints import bash_prompts, disk_state, entry_ids, events_of, seed, user_entries
from e2e.test_headless import Done, run
from rpc_agent import cli
from rpc_agent.checkpoints import free_session_checkpoints
from rpc_agent.checkpoints.store import TEMP_PREFIX

pytestmark = pytest.mark.in_process


def sidecar_of(session: Path) -> list[JsonDict]:
    return [
        json.loads(line) for line in session.with_name(session.name + ".checkpoints").read_text().splitlines()
    ]


def object_exists(session: Path) -> Callable[[str], bool]:
    """Whether an object is in the repository of ``session``'s checkpoints (``git cat-file -e``)."""
    git_dir = Path(sidecar_of(session)[0]["repository"])
    env = {"GIT_DIR": str(git_dir), "PATH": os.environ["PATH"], "HOME": str(git_dir)}

    def exists(obj: str) -> bool:
        probe = subprocess.run(["git", "cat-file", "-e", obj], env=env, capture_output=True, check=False)
        return probe.returncode == 0

    return exists


@pytest.mark.anyio
async def test_fork_and_clone_carry_states_and_restore_files(e2e: E2E) -> None:
    seed(e2e.cwd)
    script = bash_prompts("echo one > one.txt", "echo two > two.txt && rm a.txt")
    async with e2e.server(script=script) as client:
        await client.call("prompt", {"message": "first"})
        state_1 = disk_state(e2e.cwd)
        await client.call("prompt", {"message": "second"})
        state_2 = disk_state(e2e.cwd)
        original = await current_file(client)
        entries = await entry_ids(client)
        first_prompt, second_prompt = user_entries(entries)
        bash_results = [e["id"] for e in messages_of(entries, "toolResult")]

        cloned = await client.call("clone")
        assert cloned["restore"] is None
        clone_file = Path(cloned["sessionFile"])
        assert clone_file != original
        carried = {line["entry"]: line["tree"] for line in sidecar_of(clone_file) if "entry" in line}
        mine = {line["entry"]: line["tree"] for line in sidecar_of(original) if "entry" in line}
        assert carried == mine
        # The clone's entries have their states: navigate back inside the clone.
        changes = await client.call("get_file_changes", {"entryId": bash_results[1]})
        assert {f["path"] for f in changes["files"]} == {"two.txt", "a.txt"}
        await client.call("navigate_tree", {"targetId": second_prompt, "restoreFiles": True})
        assert disk_state(e2e.cwd) == state_1

        await client.call("switch_session", {"sessionPath": str(original)})
        forked = await client.call("fork", {"entryId": second_prompt, "restoreFiles": True})
        assert disk_state(e2e.cwd) == state_1  # the state when the second prompt started
        fork_file = Path(forked["sessionFile"])
        fork_states = {line["entry"] for line in sidecar_of(fork_file) if "entry" in line}
        assert first_prompt in fork_states
        assert bash_results[1] not in fork_states  # not copied: not in the fork

        await client.call("switch_session", {"sessionPath": str(original)})
        back = await client.call("clone", {"restoreFiles": True})
        assert {f["path"] for f in back["restore"]["files"]} == {"two.txt", "a.txt"}
        assert disk_state(e2e.cwd) == state_2


def rewind_cli(e2e: E2E, *args: str) -> Done:
    """``rpc-agent rewind ARGS`` through the real ``cli.main`` in the test's process, with the
    test's home (the ``in_process`` fixture set it): what the command prints and returns is the
    point; the restore that is killed midway below runs in a process of its own (its rerun
    here)."""
    assert e2e.in_process, "the e2e fixture sets the environment only for in_process tests"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = cli.main(["rewind", *args])
    return Done(code, stdout.getvalue(), stderr.getvalue())


def test_print_mode_checkpoints_and_rewind_restores_from_the_command_line(e2e: E2E) -> None:
    seed(e2e.cwd)
    before = disk_state(e2e.cwd)
    done = run(
        e2e,
        "-p",
        "change",
        "--output-format",
        "json",
        script=bash_prompts("echo x >> a.txt && rm -r src"),
    )
    assert done.returncode == 0, done.stderr
    session = Path(json.loads(done.stdout)["sessionFile"])
    after = disk_state(e2e.cwd)
    _header, entries = header_and_entries(session)
    (prompt_id,) = [e["id"] for e in messages_of(entries, "user")]
    assert len([line for line in sidecar_of(session) if "entry" in line]) == 2

    rewind = rewind_cli(e2e, str(session), prompt_id, "--dry-run")
    assert rewind.returncode == 0, rewind.stderr
    assert "added     src/b.py" in rewind.stdout
    assert disk_state(e2e.cwd) == after  # a dry run writes nothing
    done_rewind = rewind_cli(e2e, str(session), prompt_id)
    assert done_rewind.returncode == 0, done_rewind.stderr
    assert disk_state(e2e.cwd) == before
    checkpoint = done_rewind.stdout.split("checkpoint ")[-1].split()[0]
    undo = rewind_cli(e2e, str(session), "--checkpoint", checkpoint)
    assert undo.returncode == 0, undo.stderr
    assert disk_state(e2e.cwd) == after
    missing = rewind_cli(e2e, str(session), "ffffffff")
    assert missing.returncode == 1
    assert "no entry ffffffff" in missing.stderr


FILES = 1500


def test_a_restore_killed_midway_leaves_old_or_new_files_and_runs_again(e2e: E2E) -> None:
    old_content = {f"d{i % 30}/f{i}.txt": f"old {i}\n" * 400 for i in range(FILES)}
    for path, content in old_content.items():
        (e2e.cwd / path).parent.mkdir(exist_ok=True)
        (e2e.cwd / path).write_text(content)
    command = "sed -i 's/old/new/' d*/f*.txt"
    done = run(e2e, "-p", "rewrite all", "--output-format", "json", script=bash_prompts(command))
    assert done.returncode == 0, done.stderr
    session = Path(json.loads(done.stdout)["sessionFile"])
    _header, entries = header_and_entries(session)
    (prompt_id,) = [e["id"] for e in messages_of(entries, "user")]
    argv = [sys.executable, "-m", "rpc_agent", "rewind", str(session), prompt_id]
    env = {**os.environ, "RPC_AGENT_HOME": str(e2e.home)}
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        first = e2e.cwd / "d0" / "f0.txt"  # the restore writes in path order: this one first
        while first.read_text() != old_content["d0/f0.txt"] and process.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.0005)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    for path, old in old_content.items():
        text = (e2e.cwd / path).read_text()
        assert text in (old, old.replace("old", "new")), path
    rerun = rewind_cli(e2e, str(session), prompt_id)  # the run again: in this process
    assert rerun.returncode == 0, rerun.stderr
    for path, old in old_content.items():
        assert (e2e.cwd / path).read_text() == old
    leftovers = [p for p in e2e.cwd.rglob("*") if p.name.startswith(TEMP_PREFIX)]
    assert leftovers == []


@pytest.mark.anyio
async def test_deleting_a_session_frees_its_states(e2e: E2E) -> None:
    seed(e2e.cwd)
    async with e2e.server(script=bash_prompts("head -c 3000 /dev/urandom > unique.bin")) as client:
        await client.call("prompt", {"message": "make a unique file"})
        session = await current_file(client)
        (tool_result,) = [e["id"] for e in messages_of(await entry_ids(client), "toolResult")]
        tree = next(e for e in events_of(client, "checkpoint") if e["entryId"] == tool_result)["checkpointId"]
        (e2e.cwd / "unique.bin").unlink()
        await client.call("prompt", {"message": "and now it is gone"})
        header = sidecar_of(session)[0]
        git_dir = Path(header["repository"])
        exists = object_exists(session)
        assert exists(tree)
        await client.call("new_session")
        await client.call("delete_session", {"sessionPath": str(session)})
    assert not session.exists()
    assert not session.with_name(session.name + ".checkpoints").exists()
    assert not (git_dir / "refs" / "rpc-agent" / header["session"]).exists()
    assert not exists(tree)
    free_session_checkpoints(session)  # twice, or a session that never had any: nothing to do


def test_free_session_checkpoints_keeps_what_another_session_uses(e2e: E2E) -> None:
    seed(e2e.cwd)
    done = run(e2e, "-p", "one", "--output-format", "json", script=bash_prompts("echo shared > shared.txt"))
    session = Path(json.loads(done.stdout)["sessionFile"])
    again = run(e2e, "-p", "two", "--output-format", "json", script=[{"text": "nothing changed"}])
    other = Path(json.loads(again.stdout)["sessionFile"])
    assert other != session
    exists = object_exists(session)
    shared = [line["tree"] for line in sidecar_of(other) if "entry" in line]
    mine = [line["tree"] for line in sidecar_of(session) if "entry" in line]
    assert shared[0] == mine[-1]  # the second session started where the first one ended
    assert exists(shared[0])
    free_session_checkpoints(session)
    assert not session.with_name(session.name + ".checkpoints").exists()
    assert exists(shared[0])  # the other session still keeps it
    assert not exists(mine[0])  # the state before shared.txt was only the first session's


@pytest.mark.anyio
async def test_get_tree_tells_the_files_changed_of_a_session_switched_back_to(e2e: E2E) -> None:
    """The counts come from the session's sidecar when no checkpoint engine is bound to it yet
    (a session just switched to); a session without one has none."""
    seed(e2e.cwd)
    async with e2e.server(script=bash_prompts("echo one > one.txt && rm a.txt")) as client:
        await client.call("prompt", {"message": "first"})
        changed = (await client.call("get_tree", {"format": "columns"}))["filesChanged"]
        assert sorted(changed.values()) == [2]
        first = await current_file(client)
        await client.call("new_session")
        assert (await client.call("get_tree", {"format": "columns"}))["filesChanged"] == {}
        await client.call("switch_session", {"sessionPath": str(first)})
        for form in ("columns", "nodes"):
            assert (await client.call("get_tree", {"format": form}))["filesChanged"] == changed
