"""Real commands that try to get out, run by the real ``bash`` tool: each is refused under a
sandbox mode, and the same command does what it says with ``off``.

The attempts: writing outside the tree, ``rm -rf`` of a folder outside, following a symlink
out, reading the stored API key and ``~/.ssh/id_rsa`` (of a fake HOME), connecting to a
127.0.0.1 listener of the test with the network denied (Python sockets, and curl where it is
installed), writing through ``/proc/self/root``, and a child that leaves its process group
(``setsid``) to outlive the call.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from pathlib import Path

import anyio
import pytest

from proc_table import processes_running
from rpc_agent.tools.bash import BashTool
from sandbox.sandbox_testlib import KEY_SECRET, SSH_SECRET, World, listener, make_world, needs_bwrap, text_of

pytestmark = [pytest.mark.anyio, needs_bwrap]

MODES = ["off", "read-only", "workspace-write"]


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


async def bash(world: World, mode: str, command: str, network: str = "deny") -> str:
    output = await BashTool().execute({"command": command}, world.ctx(mode, network))
    return text_of(output)


async def bash_writing_outside(world: World, mode: str, command: str, target: Path, written: str) -> str:
    """Runs a command that writes ``target``, outside the tree: off, it wrote ``written`` there; in
    every sandbox the write failed as on a read-only disk. The command's output."""
    text = await bash(world, mode, command)
    if mode == "off":
        assert target.read_text() == written
    else:
        assert not target.exists()
        assert "Read-only file system" in text
    return text


@pytest.mark.parametrize("mode", MODES)
async def test_writing_outside_the_tree(world: World, mode: str) -> None:
    target = world.outside / "new.txt"
    text = await bash_writing_outside(world, mode, f"echo escaped > {target}", target, "escaped\n")
    if mode != "off":
        assert f"[Sandbox: writing {target} was refused (sandbox {mode}, network deny)" in text


@pytest.mark.parametrize("mode", MODES)
async def test_writing_inside_the_tree(world: World, mode: str) -> None:
    text = await bash(world, mode, "echo here > inside.txt && echo temp > $TMPDIR/t && cat $TMPDIR/t")
    if mode == "read-only":
        assert not (world.cwd / "inside.txt").exists()
        assert "[Sandbox: writing" in text
    else:
        assert (world.cwd / "inside.txt").read_text() == "here\n"
        if mode == "workspace-write":
            assert text.startswith("temp")  # its own temp folder is writable


@pytest.mark.parametrize("mode", MODES)
async def test_rm_rf_of_a_folder_outside(world: World, mode: str) -> None:
    text = await bash(world, mode, f"rm -rf {world.outside}")
    if mode == "off":
        assert not world.outside.exists()
    else:
        assert (world.outside / "keep.txt").read_text() == "keep me\n"
        assert "[Sandbox: writing" in text


@pytest.mark.parametrize("mode", MODES)
async def test_following_a_symlink_out_of_the_tree(world: World, mode: str) -> None:
    (world.cwd / "link").symlink_to(world.outside)
    await bash_writing_outside(
        world, mode, "echo through > link/through.txt", world.outside / "through.txt", "through\n"
    )


@pytest.mark.parametrize("mode", MODES)
async def test_reading_the_stored_key_and_the_ssh_key(world: World, mode: str) -> None:
    command = f"cat {world.agent_home}/auth.json; cat $HOME/.ssh/id_rsa; ls -a $HOME/.ssh"
    text = await bash(world, mode, command)
    if mode == "off":
        assert KEY_SECRET in text
        assert SSH_SECRET in text
    else:
        assert KEY_SECRET not in text
        assert SSH_SECRET not in text
        assert "id_rsa" in text  # only in cat's complaint: ls shows an empty folder
        assert "is hidden from sandboxed commands" in text
        # Still there for the user, untouched.
        assert SSH_SECRET in (world.home / ".ssh" / "id_rsa").read_text()


@pytest.mark.parametrize("mode", MODES)
async def test_connecting_to_localhost_with_the_network_denied(world: World, mode: str) -> None:
    with listener() as port:
        probe = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')"
        )
        text = await bash(world, mode, f'{sys.executable} -c "{probe}"')
    # The probe's own output line: Python 3.13 quotes the failing source line in a traceback.
    if mode == "off":
        assert "connected" in text.splitlines()
    else:
        assert "connected" not in text.splitlines()
        assert "ConnectionRefusedError" in text
        assert "[Sandbox: the network connection" in text


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize("mode", ["off", "workspace-write"])
async def test_curl_to_localhost_with_the_network_denied(world: World, mode: str) -> None:
    with listener(answer=b"HTTP/1.0 204 No Content\r\n\r\n") as port:
        text = await bash(world, mode, f"curl -sS -m 3 -o /dev/null http://127.0.0.1:{port}/; echo rc=$?")
    if mode == "off":
        assert "Failed to connect" not in text  # connected, and answered
        assert "rc=0" in text
    else:
        assert "Failed to connect" in text or "Couldn't connect" in text
        assert "[Sandbox: the network connection" in text


async def test_the_network_is_there_when_allowed(world: World) -> None:
    with listener() as port:
        probe = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')"
        )
        text = await bash(world, "workspace-write", f'{sys.executable} -c "{probe}"', network="allow")
    assert "connected" in text


@pytest.mark.parametrize("mode", MODES)
async def test_writing_through_proc_self_root(world: World, mode: str) -> None:
    target = world.outside / "via-proc.txt"
    await bash_writing_outside(world, mode, f"echo proc > /proc/self/root{target}", target, "proc\n")


@pytest.mark.parametrize("mode", MODES)
async def test_a_child_that_leaves_its_process_group(world: World, mode: str) -> None:
    marker = f"{40 + MODES.index(mode)}.{os.getpid()}"
    # Where the child leaves its mark: a folder it may write in every mode.
    late = (world.temp if mode == "read-only" else world.cwd) / "late.txt"
    command = f"setsid sh -c 'echo started > {late}; exec sleep {marker}' >/dev/null 2>&1 < /dev/null &"
    command += f" while [ ! -e {late} ]; do sleep 0.02; done; echo launched"
    try:
        text = await bash(world, mode, command)
        assert "launched" in text
        if mode == "off":
            assert processes_running(f"sleep {marker}")  # escaped: the call is over, it runs on
        else:
            # The PID namespace ended with the call: the kernel killed what was left in it.
            with anyio.fail_after(10):
                while processes_running(f"sleep {marker}"):  # noqa: ASYNC110
                    await anyio.sleep(0.02)
    finally:
        for pid in processes_running(f"sleep {marker}"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def test_a_timeout_kills_the_sandboxed_command(world: World) -> None:
    marker = f"47.{os.getpid()}"
    output = await BashTool().execute(
        {"command": f"sleep {marker}", "timeout": 0.5}, world.ctx("workspace-write")
    )
    assert output.details["timedOut"] is True
    with anyio.fail_after(10):
        while processes_running(f"sleep {marker}"):  # noqa: ASYNC110
            await anyio.sleep(0.02)


async def test_a_working_directory_inside_the_hidden_agent_home(world: World) -> None:
    # The tree is reachable and writable; the rest of $RPC_AGENT_HOME stays hidden.
    world.cwd = world.agent_home / "project"
    world.cwd.mkdir()
    text = await bash(world, "workspace-write", f"echo here > in.txt && cat {world.agent_home}/auth.json")
    assert (world.cwd / "in.txt").read_text() == "here\n"
    assert KEY_SECRET not in text


async def test_a_home_that_is_the_working_directory_keeps_ssh_hidden(world: World) -> None:
    world.cwd = world.home
    text = await bash(world, "workspace-write", "echo here > in.txt; cat .ssh/id_rsa; touch .ssh/new")
    assert (world.home / "in.txt").read_text() == "here\n"
    assert SSH_SECRET not in text
    assert not (world.home / ".ssh" / "new").exists()
