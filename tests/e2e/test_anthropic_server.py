"""The whole server on the Anthropic provider: the real SDK talking HTTP to the fake Messages API.

Each test runs ``rpc-agent --provider anthropic`` with ANTHROPIC_BASE_URL pointing at a
local fake server, drives it over stdio, and asserts both what the client sees and what the
"model" received. The first test spawns the server as a process (the SDK loaded the way a user's
server loads it); the others serve it in-process, still through the SDK over HTTP.
"""

from __future__ import annotations

import anyio
import anyio.to_thread
import pytest

from e2e.conftest import (
    E2E,
    MODEL,
    JsonDict,
    anthropic,
    header_and_entries,
    messages_of,
    start,
    text_of,
    wait_event,
)
from fake_anthropic import FakeAnthropic, HttpError, Reply, Text, Thinking, ToolUse, tool_round

pytestmark = pytest.mark.anyio


def roles(body: JsonDict) -> list[str]:
    return [m["role"] for m in body["messages"]]


def blocks(body: JsonDict, kind: str) -> list[JsonDict]:
    return [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == kind
    ]


async def test_streamed_text_reaches_the_client_and_the_request_is_well_formed(
    e2e: E2E, fake: FakeAnthropic
) -> None:
    fake.enqueue(Reply([Text("Hello from the fake Claude, streamed in pieces.")], chunk_size=6))
    async with e2e.server(*anthropic()) as client:
        result = await client.call("prompt", {"message": "Say hello"})
        assert result["stopReason"] == "stop"
        answer = result["messages"][-1]
        assert text_of(answer) == "Hello from the fake Claude, streamed in pieces."
        deltas = [
            e["assistantMessageEvent"]["delta"]
            for e in client.events_seen
            if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
        ]
        assert len(deltas) > 3
        assert "".join(deltas) == text_of(answer)
        assert answer["usage"]["input"] == 100
        assert answer["usage"]["cost"]["total"] > 0
    body = fake.bodies[0]
    assert body["model"] == MODEL
    assert body["stream"] is True
    assert roles(body) == ["user"]
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "Current working directory" in body["system"][0]["text"]
    tool_names = {tool["name"] for tool in body["tools"]}
    assert {"read", "write", "edit", "bash", "grep", "find", "ls"} <= tool_names
    assert all("input_schema" in tool for tool in body["tools"])


@pytest.mark.in_process
async def test_tool_use_round_trip_runs_the_tool_in_the_cwd(e2e: E2E, fake: FakeAnthropic) -> None:
    fake.enqueue(
        *tool_round(
            Text("Creating it."),
            ToolUse("toolu_01", "bash", {"command": "echo made > made.txt && cat made.txt"}),
            answer="Done: made.txt exists.",
        )
    )
    async with e2e.server(*anthropic()) as client:
        result = await client.call("prompt", {"message": "make a file"})
        assert result["stopReason"] == "stop"
        assert [m["role"] for m in result["messages"]] == ["user", "assistant", "toolResult", "assistant"]
        assert result["messages"][2]["isError"] is False
        assert "made" in text_of(result["messages"][2])
        # pi 1.5's stream additions: the tool call's start names it; every update has the usage
        # so far, and the last ones the count the API reported.
        updates = [e for e in client.events_seen if e["type"] == "message_update"]
        starts = [
            u["assistantMessageEvent"]
            for u in updates
            if u["assistantMessageEvent"]["type"] == "toolcall_start"
        ]
        assert [(s["id"], s["toolName"]) for s in starts] == [("toolu_01", "bash")]
        assert all("usage" in u for u in updates)
        assert updates[-1]["usage"]["input"] == result["messages"][-1]["usage"]["input"] > 0
        (end,) = [e for e in client.events_seen if e["type"] == "tool_execution_end"]
        assert end["durationMs"] >= 0
    assert (e2e.cwd / "made.txt").read_text() == "made\n"
    second = fake.bodies[1]
    assert roles(second) == ["user", "assistant", "user"]
    (tool_use,) = blocks(second, "tool_use")
    (tool_result,) = blocks(second, "tool_result")
    assert tool_use["id"] == tool_result["tool_use_id"] == "toolu_01"
    assert second["messages"][-1]["content"][0]["type"] == "tool_result"


@pytest.mark.in_process
async def test_thinking_with_signature_is_sent_back_verbatim(e2e: E2E, fake: FakeAnthropic) -> None:
    fake.enqueue(
        Reply([Thinking("Let me think this through.", signature="sig-abc-123"), Text("Forty-two.")]),
        Reply([Text("Still forty-two.")]),
    )
    async with e2e.server(*anthropic("--thinking", "low")) as client:
        await client.call("prompt", {"message": "the answer?"})
        thinking_deltas = [
            e
            for e in client.events_seen
            if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "thinking_delta"
        ]
        assert thinking_deltas
        await client.call("prompt", {"message": "sure?"})
    first, second = fake.bodies
    assert first["thinking"]["type"] in ("enabled", "adaptive")
    sent_back = blocks(second, "thinking")
    assert sent_back == [
        {"type": "thinking", "thinking": "Let me think this through.", "signature": "sig-abc-123"}
    ]
    assert roles(second) == ["user", "assistant", "user"]


@pytest.mark.in_process
async def test_overloaded_then_success_is_retried_with_events(e2e: E2E, fake: FakeAnthropic) -> None:
    fake.enqueue(HttpError(529, "overloaded_error", "Overloaded"), Reply([Text("Back again.")]))
    async with e2e.server(*anthropic()) as client:
        result = await client.call("prompt", {"message": "hi"})
        assert result["stopReason"] == "stop"
        retry = [e for e in client.events_seen if e["type"].startswith("auto_retry")]
        assert [e["type"] for e in retry] == ["auto_retry_start", "auto_retry_end"]
        assert "529" in retry[0]["errorMessage"] or "verloaded" in retry[0]["errorMessage"]
        assert retry[1]["success"] is True
    assert len(fake.requests) == 2


@pytest.mark.in_process
async def test_bad_api_key_is_a_clear_error_and_not_retried(e2e: E2E, fake: FakeAnthropic) -> None:
    fake.enqueue(HttpError(401, "authentication_error", "invalid x-api-key"))
    async with e2e.server(*anthropic()) as client:
        result = await client.call("prompt", {"message": "hi"})
        assert result["stopReason"] == "error"
        assert "auth" in result["errorMessage"].lower()
        assert not [e for e in client.events_seen if e["type"].startswith("auto_retry")]
        state = await client.get_state()
        assert state.isStreaming is False
    assert len(fake.requests) == 1


@pytest.mark.in_process
async def test_connection_dropped_mid_stream_keeps_the_partial_answer(e2e: E2E, fake: FakeAnthropic) -> None:
    fake.enqueue(
        Reply(
            [Text("This answer will be cut off somewhere in the middle of it.")], chunk_size=5, drop_after=6
        )
    )
    async with e2e.server(*anthropic("--no-auto-retry")) as client:
        result = await client.call("prompt", {"message": "talk"})
        assert result["stopReason"] == "error"
        partial = result["messages"][-1]
        assert partial["stopReason"] == "error"
        assert text_of(partial)  # what arrived before the drop is kept
        assert "This answer will be cut off".startswith(text_of(partial)[:10])
    (session,) = e2e.session_files()
    _, entries = header_and_entries(session)  # a valid file: every line complete
    assert messages_of(entries, "assistant")[-1]["message"]["stopReason"] == "error"


@pytest.mark.in_process
async def test_abort_mid_stream_stores_the_partial_and_closes_the_connection(
    e2e: E2E, fake: FakeAnthropic
) -> None:
    fake.enqueue(Reply([Text("slow " * 200)], chunk_size=5, delay=0.05))
    async with e2e.server(*anthropic()) as client, anyio.create_task_group() as group:
        prompt = start(group, lambda: client.call("prompt", {"message": "go slowly"}))
        await wait_event(
            client, "message_update", lambda e: e["assistantMessageEvent"]["type"] == "text_delta"
        )
        assert (await client.call("abort"))["aborted"] is True
        with anyio.fail_after(30):
            await prompt.done.wait()
        assert prompt.value["stopReason"] == "aborted"
        assert prompt.value["messages"][-1]["stopReason"] == "aborted"
        assert text_of(prompt.value["messages"][-1]).startswith("slow")
    # The fake server noticed the client hang up (a threading.Event, waited for off the loop).
    assert await anyio.to_thread.run_sync(fake.requests[0].disconnected.wait, 30)


@pytest.mark.in_process
async def test_abort_during_a_long_bash_kills_it(e2e: E2E, fake: FakeAnthropic) -> None:
    fake.enqueue(Reply([ToolUse("toolu_sleep", "bash", {"command": "sleep 30"})], stop_reason="tool_use"))
    async with e2e.server(*anthropic()) as client, anyio.create_task_group() as group:
        prompt = start(group, lambda: client.call("prompt", {"message": "wait a while"}))
        await wait_event(client, "tool_execution_start")
        await client.call("abort")
        with anyio.fail_after(30):
            await prompt.done.wait()
        assert prompt.value["stopReason"] == "aborted"
        tool_result = prompt.value["messages"][-1]
        assert tool_result["role"] == "toolResult"
        assert tool_result["isError"] is True
        assert "abort" in text_of(tool_result).lower()
    assert len(fake.requests) == 1


@pytest.mark.in_process
async def test_steer_during_a_tool_call_reaches_the_next_request(e2e: E2E, fake: FakeAnthropic) -> None:
    fake.enqueue(
        Reply([ToolUse("toolu_wait", "bash", {"command": "sleep 1; echo waited"})], stop_reason="tool_use"),
        Reply([Text("Understood, using the new direction.")]),
    )
    async with e2e.server(*anthropic()) as client, anyio.create_task_group() as group:
        prompt = start(group, lambda: client.call("prompt", {"message": "start the job"}))
        await wait_event(client, "tool_execution_start")
        await client.call("steer", {"message": "also write a summary"})
        with anyio.fail_after(30):
            await prompt.done.wait()
        assert prompt.value["stopReason"] == "stop"
        stats = await client.get_session_stats()
        assert stats.assistantMessages == 2
        assert stats.toolCalls == 1
        assert stats.tokens.input == 200
        assert stats.cost > 0
    second = fake.bodies[1]
    last = second["messages"][-1]
    assert last["role"] == "user"
    assert last["content"][0]["type"] == "tool_result"
    assert any(b.get("text") == "also write a summary" for b in last["content"] if b["type"] == "text")


@pytest.mark.in_process
async def test_host_round_trip_approval_client_tool_and_hooks(e2e: E2E, fake: FakeAnthropic) -> None:
    """One full round on the real SDK: the host denies a write, runs its own tool, injects a
    message and the system prompt, and supplies a branch summary that costs no model call."""
    fake.enqueue(
        *tool_round(
            ToolUse("toolu_w", "write", {"path": "no.txt", "content": "x"}),
            ToolUse("toolu_c", "clock", {"zone": "UTC"}),
            answer="It is noon; I did not write the file.",
        )
    )
    async with e2e.server(*anthropic()) as client:
        client.on_approval(lambda params: {"decision": "deny", "message": "read-only today"})
        client.add_tool(
            lambda zone: f"12:00 {zone}",
            name="clock",
            description="The time in a zone.",
            parameters={"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
            read_only=True,
        )
        client.on_hook(
            "before_agent_start",
            lambda event: {
                "systemPrompt": "You are the host's agent.",
                "message": {"customType": "ctx", "content": "The user is on call."},
            },
        )
        client.on_hook("session_before_tree", lambda event: {"summary": {"summary": "host summary"}})
        await client.initialize()
        result = await client.call("prompt", {"message": "what time is it?"})
        assert result["stopReason"] == "stop"
        denied, clock = [m for m in result["messages"] if m["role"] == "toolResult"]
        assert denied["isError"] is True
        assert "read-only today" in text_of(denied)
        assert text_of(clock) == "12:00 UTC"
        requests_before = len(fake.requests)
        first_user = result["messages"][0]
        _header, entries = header_and_entries(e2e.session_files()[0])
        user_id = next(e["id"] for e in entries if e.get("message") == first_user)
        navigated = await client.navigate_tree(user_id, summarize=True)
        assert navigated.summaryEntryId is not None
        assert len(fake.requests) == requests_before  # the hook's summary: no model call
    assert not (e2e.cwd / "no.txt").exists()
    first, second = fake.bodies[:2]
    assert first["system"][0]["text"] == "You are the host's agent."
    assert "clock" in {tool["name"] for tool in first["tools"]}
    assert "The user is on call." in str(first["messages"])
    results = blocks(second, "tool_result")
    assert [r["tool_use_id"] for r in results] == ["toolu_w", "toolu_c"]
    assert "read-only today" in str(results[0]["content"])
    _header, entries = header_and_entries(e2e.session_files()[0])
    summary = next(e for e in entries if e["type"] == "branch_summary")
    assert summary["fromHook"] is True
    assert summary["summary"] == "host summary"
