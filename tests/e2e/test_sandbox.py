"""The sandbox through the server: flags and params set it, get_state reports it, a refused
command says so, the host may let one command out, and a mode that cannot run stops the start."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest

from e2e.conftest import E2E, JsonDict, expect_error, text_of
from rpc_agent.sandbox import bwrap
from rpc_agent.server import errors as codes

pytestmark = [pytest.mark.anyio]

needs_bwrap = pytest.mark.skipif(
    bwrap.unavailable_reason() is not None,
    reason=f"no sandbox here: {bwrap.unavailable_reason()} (CI installs bubblewrap)",
)


def bash_call(command: str) -> JsonDict:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


@needs_bwrap
@pytest.mark.in_process
async def test_the_flag_sets_the_mode_and_a_refusal_says_so(e2e: E2E) -> None:
    outside = e2e.root / "outside.txt"
    script = [bash_call(f"echo x > {outside}; echo y > inside.txt"), {"text": "done"}]
    async with e2e.server("--sandbox", "workspace-write", script=script) as client:
        state = await client.call("get_state")
        assert state["sandbox"] == {
            "mode": "workspace-write",
            "network": "deny",
            "hideCredentials": True,
            "mechanism": "bubblewrap",
        }
        result = await client.call("prompt", {"message": "go"})
    tool_result = result["messages"][2]
    assert not outside.exists()
    assert (e2e.cwd / "inside.txt").read_text() == "y\n"
    assert f"[Sandbox: writing {outside} was refused (sandbox workspace-write, network deny)" in text_of(
        tool_result
    )
    assert tool_result["details"]["sandboxDenied"] is True


@needs_bwrap
@pytest.mark.in_process
async def test_initialize_and_new_session_choose_the_sandbox(e2e: E2E) -> None:
    async with e2e.server() as client:
        assert (await client.call("get_state"))["sandbox"]["mode"] == "off"
        await client.initialize(sandbox={"mode": "read-only"})
        state = await client.call("get_state")
        assert (state["sandbox"]["mode"], state["sandbox"]["network"]) == ("read-only", "deny")
        await client.new_session(sandbox={"mode": "workspace-write", "network": "allow"})
        state = await client.call("get_state")
        assert (state["sandbox"]["mode"], state["sandbox"]["network"]) == ("workspace-write", "allow")
        await expect_error(client.call("new_session", {"sandbox": {"mode": "all"}}), codes.INVALID_PARAMS)


@needs_bwrap
@pytest.mark.in_process
async def test_the_users_bash_obeys_the_sandbox(e2e: E2E) -> None:
    outside = e2e.root / "user-outside.txt"
    async with e2e.server("--sandbox", "read-only") as client:
        result = await client.call("bash", {"command": f"echo x > {outside}"})
    assert not outside.exists()
    assert "Read-only file system" in result["output"]


@needs_bwrap
@pytest.mark.in_process
async def test_an_approved_escape_runs_the_command_once_outside(e2e: E2E) -> None:
    outside = e2e.root / "escaped.txt"
    asked: list[JsonDict] = []
    script = [bash_call(f"echo out > {outside}"), {"text": "done"}]
    async with e2e.server("--sandbox", "workspace-write", script=script) as client:

        def approve(params: JsonDict) -> str:
            asked.append(params)
            return "allow"

        client.on_approval(approve)
        await client.initialize()
        result = await client.call("prompt", {"message": "go"})
    # The approval policy asks for the bash call first; the sandbox's refusal asks again.
    assert [a.get("sandbox") for a in asked] == [None, "escape"]
    assert asked[1]["arguments"] == {"command": f"echo out > {outside}"}
    assert asked[1]["preview"]["sandbox"] == "sandbox workspace-write, network deny"
    assert outside.read_text() == "out\n"
    assert "[Ran outside the sandbox: the user approved it.]" in text_of(result["messages"][2])
    approvals = [e for e in client.events_seen if e["type"] == "approval"]
    assert [(e["decision"], e["source"]) for e in approvals][-1] == ("allow", "client")
    assert approvals[-1]["reason"] == "run outside the sandbox (sandbox workspace-write, network deny)"


@needs_bwrap
@pytest.mark.in_process
async def test_a_denied_escape_keeps_the_refusal(e2e: E2E) -> None:
    outside = e2e.root / "kept-in.txt"
    script = [bash_call(f"echo out > {outside}"), {"text": "done"}]
    async with e2e.server("--sandbox", "workspace-write", "--approval", "never", script=script) as client:
        client.on_approval(lambda params: "deny")
        await client.initialize()
        result = await client.call("prompt", {"message": "go"})
    assert not outside.exists()
    assert "[Sandbox: writing" in text_of(result["messages"][2])


async def test_a_mode_that_cannot_run_stops_the_start_with_the_reason(e2e: E2E) -> None:
    # No bwrap on PATH: asked for explicitly, the sandbox is never dropped in silence.
    empty = e2e.root / "empty-bin"
    empty.mkdir()
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [sys.executable, "-m", "rpc_agent", *e2e.argv("--sandbox", "workspace-write")],
            env={**os.environ, **e2e.env(), "PATH": str(empty)},
            check=False,
        )
    assert done.returncode == 2
    stderr = done.stderr.decode()
    assert (
        "the sandbox mode 'workspace-write' was asked for, but bubblewrap (bwrap) is not installed" in stderr
    )


@needs_bwrap
@pytest.mark.in_process
def test_print_mode_runs_the_commands_in_the_sandbox(e2e: E2E) -> None:
    from e2e.test_headless import run

    outside = e2e.root / "headless-outside.txt"
    script = [bash_call(f"echo x > {outside}; echo y > inside.txt"), {"text": "All done."}]
    done = run(e2e, "-p", "go", "--sandbox", "workspace-write", "--output-format", "json", script=script)
    assert done.returncode == 0, done.stderr
    assert not outside.exists()
    assert (e2e.cwd / "inside.txt").read_text() == "y\n"


@pytest.mark.in_process
async def test_initialize_asking_for_a_sandbox_that_cannot_run_is_an_error(
    e2e: E2E, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "unavailable_reason", lambda: "bubblewrap is missing")
    async with e2e.server() as client:
        error = await expect_error(
            client.call("initialize", {"sandbox": {"mode": "workspace-write"}}), codes.INVALID_PARAMS
        )
        assert "bubblewrap is missing" in error.message
        assert (await client.call("get_state"))["sandbox"]["mode"] == "off"


@needs_bwrap
@pytest.mark.in_process
async def test_workspace_write_covers_the_additional_directories(e2e: E2E) -> None:
    extra = e2e.root / "extra"
    extra.mkdir()
    outside = e2e.root / "not-a-root.txt"
    script = [bash_call(f"echo x > {extra}/in-extra.txt; echo y > {outside}"), {"text": "done"}]
    async with e2e.server(script=script) as client:
        await client.call(
            "initialize", {"sandbox": {"mode": "workspace-write"}, "additionalDirectories": [str(extra)]}
        )
        await client.call("prompt", {"message": "go"})
    assert (extra / "in-extra.txt").read_text() == "x\n"
    assert not outside.exists()


@pytest.mark.in_process
async def test_a_refused_sandbox_leaves_the_additional_directories_as_they_were(
    e2e: E2E, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "unavailable_reason", lambda: "bubblewrap is missing")
    extra = e2e.root / "extra"
    extra.mkdir()
    async with e2e.server() as client:
        params = {"sandbox": {"mode": "read-only"}, "additionalDirectories": [str(extra)]}
        await expect_error(client.call("initialize", params), codes.INVALID_PARAMS)
        state = await client.call("get_state")
    assert state["sandbox"]["mode"] == "off"
    assert str(extra) not in json.dumps(state)
