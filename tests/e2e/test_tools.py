"""Tool round trips driven by the faux script: the model calls a tool, the result is stored and
the loop calls the model again."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import (
    CHECKPOINT_EVENTS,
    E2E,
    JsonDict,
    event_types,
    header_and_entries,
    messages_of,
    text_of,
)

pytestmark = pytest.mark.anyio


@pytest.mark.in_process
async def test_bash_tool_round_trip(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo hi > f.txt && cat f.txt"}}]},
        {"text": "The file says hi."},
    ]
    async with e2e.server(script=script) as client:
        result = await client.call("prompt", {"message": "make a file"})
        assert result["stopReason"] == "stop"
        roles = [m["role"] for m in result["messages"]]
        assert roles == ["user", "assistant", "toolResult", "assistant"]
        call_message, tool_result, final = result["messages"][1:]
        assert call_message["stopReason"] == "toolUse"
        (call,) = [b for b in call_message["content"] if b["type"] == "toolCall"]
        assert call["name"] == "bash"
        assert tool_result["toolCallId"] == call["id"]
        assert tool_result["isError"] is False
        assert text_of(tool_result).strip() == "hi"
        assert text_of(final) == "The file says hi."
        assert (e2e.cwd / "f.txt").read_text() == "hi\n"

        events = [e for e in client.events_seen if e["type"] not in CHECKPOINT_EVENTS]
        types = event_types(events)
        start = types.index("tool_execution_start")
        end = types.index("tool_execution_end")
        assert start < end
        assert set(types[start + 1 : end]) <= {"tool_execution_update"}
        assert types.count("turn_start") == 2
        assert types.index("turn_end") > end
        start_event, end_event = events[start], events[end]
        assert start_event["toolCallId"] == call["id"]
        assert start_event["args"] == {"command": "echo hi > f.txt && cat f.txt"}
        assert end_event["isError"] is False
        assert end_event["result"]["content"] == tool_result["content"]
        toolcall_deltas = [
            e["assistantMessageEvent"]
            for e in client.events_seen
            if e["type"] == "message_update" and e["assistantMessageEvent"]["type"].startswith("toolcall")
        ]
        assert [d["type"] for d in toolcall_deltas] == ["toolcall_start", "toolcall_delta", "toolcall_end"]
        first_turn_end = next(e for e in client.events_seen if e["type"] == "turn_end")
        assert first_turn_end["toolResults"] == [tool_result]

        state = await client.get_state()
        assert state.sessionFile is not None
        _, entries = header_and_entries(Path(state.sessionFile))
        stored = [e["message"] for e in messages_of(entries)]
        assert stored == result["messages"]


@pytest.mark.in_process
async def test_write_read_edit_tools(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "write", "arguments": {"path": "notes/a.txt", "content": "alpha\nbeta\n"}}]},
        {"toolCalls": [{"name": "read", "arguments": {"path": "notes/a.txt"}}]},
        {
            "toolCalls": [
                {"name": "edit", "arguments": {"path": "notes/a.txt", "oldText": "beta", "newText": "gamma"}},
                {"name": "read", "arguments": {"path": "notes/a.txt"}},
            ]
        },
        {
            "toolCalls": [
                {"name": "edit", "arguments": {"path": "notes/a.txt", "oldText": "zzz", "newText": "q"}}
            ]
        },
        {"toolCalls": [{"name": "nope", "arguments": {}}]},
        {"toolCalls": [{"name": "write", "arguments": {"path": "b.txt"}}]},
        {"text": "all done"},
    ]
    async with e2e.server(script=script) as client:
        result = await client.call("prompt", {"message": "edit some files"})
        assert result["stopReason"] == "stop"
        results = [m for m in result["messages"] if m["role"] == "toolResult"]
        assert [r["toolName"] for r in results] == ["write", "read", "edit", "read", "edit", "nope", "write"]
        assert [r["isError"] for r in results] == [False, False, False, False, True, True, True]
        assert "alpha" in text_of(results[1])
        assert "beta" in text_of(results[1])
        assert "gamma" in text_of(results[3])
        assert "beta" not in text_of(results[3])
        assert "Tool 'nope' not found" in text_of(results[5])
        assert "content" in text_of(results[6])
        assert (e2e.cwd / "notes" / "a.txt").read_text() == "alpha\ngamma\n"
        assert not (e2e.cwd / "b.txt").exists()
        assert text_of(result["messages"][-1]) == "all done"
        ends = [e for e in client.events_seen if e["type"] == "tool_execution_end"]
        assert [e["isError"] for e in ends] == [r["isError"] for r in results]


@pytest.mark.in_process
async def test_full_output_files_are_removed_when_their_session_closes(e2e: E2E) -> None:
    long_output: JsonDict = {"toolCalls": [{"name": "bash", "arguments": {"command": "seq 1 5000"}}]}
    script: list[JsonDict] = [long_output, {"text": "long"}, long_output, {"text": "long again"}]

    async def full_output_of_a_prompt(client: Any) -> Path:
        result = await client.call("prompt", {"message": "print a lot"})
        tool_result = result["messages"][2]
        assert "Output truncated" in text_of(tool_result)
        path = Path(tool_result["details"]["fullOutputPath"])
        assert path.read_text().splitlines()[-1] == "5000"
        return path

    async with e2e.server(script=script) as client:
        first = await full_output_of_a_prompt(client)
        by_method = Path((await client.call("bash", {"command": "seq 1 5000"}))["fullOutputPath"])
        assert by_method.exists()
        await client.call("new_session")
        assert not first.exists()
        assert not by_method.exists()
        second = await full_output_of_a_prompt(client)
    assert not second.exists()  # the server exited


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_a_detached_background_job_is_not_waited_for(
    e2e: E2E, loop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RPC_AGENT_LOOP", loop)
    command = "sleep 30 </dev/null >/dev/null 2>&1 & echo $! > job.pid; echo started"
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
        {"text": "ok"},
    ]
    async with e2e.server(script=script) as client:
        result = await client.call("prompt", {"message": "start a job"})
    pid = int((e2e.cwd / "job.pid").read_text())
    try:
        tool_result = result["messages"][2]
        assert text_of(tool_result) == "started"  # no note about a process holding the output
        assert sorted(os.listdir(f"/proc/{pid}/fd")) == ["0", "1", "2"]
    finally:
        os.kill(pid, signal.SIGKILL)
