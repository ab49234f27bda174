"""The ``bash`` method: the user's own commands, kept in the context of the next prompt."""

from __future__ import annotations

import anyio
import pytest

from e2e.conftest import E2E, WAIT, start, text_of, wait_event

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


async def test_bash_output_joins_the_next_prompts_context(e2e: E2E) -> None:
    (e2e.cwd / "hello.txt").write_text("hello from the file\n")
    async with e2e.server() as client:
        result = await client.bash("cat hello.txt; echo to-stderr >&2; exit 3")
        assert result.exitCode == 3
        assert result.cancelled is False
        assert "hello from the file" in result.output
        assert "to-stderr" in result.output
        excluded = await client.call("bash", {"command": "echo secret", "excludeFromContext": True})
        assert excluded["exitCode"] == 0

        prompt = await client.call("prompt", {"message": "what did I run?"})
        assert [m["role"] for m in prompt["messages"]] == ["user", "assistant"]
        messages = (await client.call("get_messages"))["messages"]
        assert [m["role"] for m in messages] == ["bashExecution", "bashExecution", "user", "assistant"]
        ran = messages[0]
        assert ran["command"] == "cat hello.txt; echo to-stderr >&2; exit 3"
        assert ran["exitCode"] == 3
        assert "hello from the file" in ran["output"]
        assert messages[1]["excludeFromContext"] is True
        assert text_of(messages[3]) == "Echo: what did I run?"
        nodes = (await client.call("get_tree"))["nodes"]
        assert nodes[0]["role"] == "bashExecution"
        assert nodes[0]["preview"] == "$ cat hello.txt; echo to-stderr >&2; exit 3"
        assert await client.call("abort_bash") == {"aborted": False}


async def test_abort_bash(e2e: E2E) -> None:
    marker = e2e.root / "started"
    async with e2e.server() as client:
        async with anyio.create_task_group() as group:
            running = start(group, lambda: client.bash(f"echo started; touch {marker}; sleep 30"))
            with anyio.fail_after(WAIT):
                while not marker.exists():  # noqa: ASYNC110 (a file made by the command)
                    await anyio.sleep(0.02)
            assert (await client.call("abort_bash"))["aborted"] is True
            with anyio.fail_after(15):  # far less than the 30 s sleep: the command was killed
                result = await running.result()
        assert result.cancelled is True
        assert result.exitCode is None
        assert result.output.strip() == "started"
        messages = (await client.call("get_messages"))["messages"]
        assert messages[-1]["role"] == "bashExecution"
        assert messages[-1]["cancelled"] is True
        assert (await client.get_state()).isStreaming is False
        # The server carries on.
        again = await client.bash("echo fine")
        assert again.output.strip() == "fine"


async def test_an_abort_right_after_the_first_output_keeps_that_output(e2e: E2E) -> None:
    """The client saw "started" streamed; the stored message must hold it too, though the
    abort comes before the tool's next periodic update."""
    async with e2e.server() as client:
        async with anyio.create_task_group() as group:
            running = start(group, lambda: client.bash("echo started; sleep 30"))
            await wait_event(client, "bash_execution_update", lambda event: "started" in event["delta"])
            assert (await client.call("abort_bash"))["aborted"] is True
            with anyio.fail_after(15):
                result = await running.result()
        assert result.cancelled is True
        assert result.output.strip() == "started"
        messages = (await client.call("get_messages"))["messages"]
        assert messages[-1]["role"] == "bashExecution"
        assert messages[-1]["output"].strip() == "started"
