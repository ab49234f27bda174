"""What pi 1.5.2's RPC mode added, in JSON-RPC form: the server in the test's event loop
(``in_process``: these are methods and events, not the process), raw lines where the bytes of a
request id are the point.

Methods: ``clear_queue``, ``get_available_thinking_levels``, ``get_commands``. Events and fields:
``agent_settled``, ``agent_end.willRetry``, ``message_update`` usage, ``toolcall_start`` naming
its call, ``tool_execution_end.durationMs``, ``bash_execution_update``, ``compaction_end`` with
``estimatedTokensAfter`` and ``usage``, ``thinking_level_changed``, ``session_info_changed``,
``entry_appended`` and ``summarization_retry_*``. Each is checked at the moment pi sends it.
"""

from __future__ import annotations

import anyio
import pytest

from e2e.conftest import E2E, JsonDict, start, wait_event
from rpc_agent.protocol.entries import THINKING_LEVELS
from rpc_agent_client import RpcCallError

pytestmark = [pytest.mark.anyio]


OVERLOADED: JsonDict = {"error": "overloaded", "status": 529, "retryable": True}


def of_type(events: list[JsonDict], *types: str) -> list[JsonDict]:
    return [e for e in events if e["type"] in types]


def compaction_kinds(events: list[JsonDict]) -> list[str]:
    """The types of the compaction and summary events, in order."""
    return [e["type"] for e in events if e["type"].startswith(("compaction", "summarization"))]


@pytest.mark.in_process
async def test_clear_queue_hands_back_the_queued_texts(e2e: E2E) -> None:
    gate = e2e.root / "go"
    command = f"while [ ! -e {gate} ]; do sleep 0.02; done"
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}]
    async with e2e.server(script=script) as client:
        empty = await client.clear_queue()
        assert (empty.steering, empty.followUp) == ([], [])
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "go"}))
            await wait_event(client, "tool_execution_start")
            await client.follow_up("later")
            await client.steer("now")
            await client.steer("and this")
            mark = len(client.events_seen)
            cleared = await client.clear_queue()
            assert (cleared.steering, cleared.followUp) == (["now", "and this"], ["later"])
            update = await wait_event(client, "queue_update", after=mark)
            assert (update["steering"], update["followUp"]) == ([], [])
            assert (await client.get_state()).pendingMessageCount == 0
            gate.touch()
            result = await prompt.result()
        # Nothing cleared reached the model: the run ends after the tool's turn and its answer.
        assert [m["role"] for m in result["messages"]] == ["user", "assistant", "toolResult", "assistant"]


@pytest.mark.in_process
async def test_run_events_name_tool_calls_time_tools_and_settle(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {
            "toolCalls": [
                {"name": "bash", "arguments": {"command": "echo hi"}, "id": "call_bash"},
                {"name": "no_such_tool", "arguments": {}, "id": "call_missing"},
            ]
        },
        {"text": "all done", "usage": {"input": 30, "output": 7}},
    ]
    async with e2e.server(script=script) as client:
        await client.prompt("run it")
        events = list(client.events_seen)
        starts = [
            e["assistantMessageEvent"]
            for e in of_type(events, "message_update")
            if e["assistantMessageEvent"]["type"] == "toolcall_start"
        ]
        assert [(s["id"], s["toolName"]) for s in starts] == [
            ("call_bash", "bash"),
            ("call_missing", "no_such_tool"),
        ]
        # Every update carries the answer's usage so far; the last one the final count.
        updates = of_type(events, "message_update")
        assert all(set(u["usage"]) >= {"input", "output", "totalTokens", "cost"} for u in updates)
        final = [u for u in updates if u["assistantMessageEvent"]["type"] == "done"][-1]
        assert (final["usage"]["input"], final["usage"]["output"]) == (30, 7)
        ends = {e["toolCallId"]: e for e in of_type(events, "tool_execution_end")}
        assert isinstance(ends["call_bash"]["durationMs"], int)
        assert ends["call_bash"]["durationMs"] >= 0
        # A tool that never ran has no duration.
        assert ends["call_missing"]["isError"] is True
        assert "durationMs" not in ends["call_missing"]
        # agent_end says no retry follows; agent_settled is the run's very last event.
        tail = [e["type"] for e in events[-2:]]
        assert tail == ["agent_end", "agent_settled"]
        assert events[-2]["willRetry"] is False
        assert events[-1] == {"type": "agent_settled", "aborted": False}


@pytest.mark.in_process
async def test_an_aborted_run_settles_aborted(e2e: E2E) -> None:
    script: list[JsonDict] = [{"text": "a slow answer that will not finish", "delayMs": 200}]
    async with e2e.server(script=script) as client:
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "slow"}))
            await wait_event(client, "message_update")
            assert (await client.abort()).aborted is True
            await prompt.result()
        settled = await wait_event(client, "agent_settled")
        assert settled["aborted"] is True
        # The next run is not aborted.
        mark = len(client.events_seen)
        await client.prompt("again")
        assert (await wait_event(client, "agent_settled", after=mark))["aborted"] is False


@pytest.mark.in_process
async def test_thinking_levels_follow_the_model_and_changes_are_announced(e2e: E2E) -> None:
    async with e2e.server() as client:
        assert await client.get_available_thinking_levels() == list(THINKING_LEVELS)
        mark = len(client.events_seen)
        await client.set_thinking_level("high")
        await client.set_thinking_level("high")  # no change: no event
        assert (await client.cycle_thinking_level()).level == "xhigh"
        changed = of_type(client.events_seen[mark:], "thinking_level_changed")
        assert changed == [
            {"type": "thinking_level_changed", "level": "high"},
            {"type": "thinking_level_changed", "level": "xhigh"},
        ]
        # A model without reasoning takes "off" only: switching to it clamps the level (stored
        # and announced, as pi does), and cycling stays there without storing anything.
        mark = len(client.events_seen)
        await client.set_model("faux-plain")
        assert await client.get_available_thinking_levels() == ["off"]
        assert of_type(client.events_seen[mark:], "thinking_level_changed") == [
            {"type": "thinking_level_changed", "level": "off"}
        ]
        assert (await client.get_state()).thinkingLevel == "off"
        entries = (await client.get_entries()).entries
        assert [(e["type"], e.get("thinkingLevel")) for e in entries[-2:]] == [
            ("model_change", None),
            ("thinking_level_change", "off"),
        ]
        assert (await client.cycle_thinking_level()).level == "off"
        assert len((await client.get_entries()).entries) == len(entries)
        # Back on a model with reasoning, the level stays where it is.
        mark = len(client.events_seen)
        await client.set_model("faux-1")
        assert await client.get_available_thinking_levels() == list(THINKING_LEVELS)
        assert of_type(client.events_seen[mark:], "thinking_level_changed") == []


@pytest.mark.in_process
async def test_get_commands_lists_none(e2e: E2E) -> None:
    # No slash commands, prompt templates or skills here: a "/..." prompt reaches the model as written.
    async with e2e.server() as client:
        assert (await client.get_commands()).commands == []
        result = await client.call("prompt", {"message": "/compact"})
        assert result["messages"][-1]["content"][0]["text"] == "Echo: /compact"


@pytest.mark.in_process
async def test_session_name_and_custom_entries_are_announced(e2e: E2E) -> None:
    async with e2e.server() as client:
        await client.prompt("hello")
        mark = len(client.events_seen)
        await client.set_session_name("Refactor")
        await client.set_session_name("")
        named = of_type(client.events_seen[mark:], "session_info_changed")
        assert named == [
            {"type": "session_info_changed", "name": "Refactor"},
            {"type": "session_info_changed"},
        ]

        mark = len(client.events_seen)
        entry_id = await client.append_custom_entry("bookmark", {"at": 3})
        appended = await wait_event(client, "entry_appended", after=mark)
        entry = appended["entry"]
        assert (entry["id"], entry["type"], entry["customType"], entry["data"]) == (
            entry_id,
            "custom",
            "bookmark",
            {"at": 3},
        )
        assert entry == (await client.get_entries(since=None)).entries[-1]
        # Labels and names have events of their own (or none, as in pi): no entry_appended.
        mark = len(client.events_seen)
        await client.set_label(entry_id or "", "here")
        assert of_type(client.events_seen[mark:], "entry_appended") == []


@pytest.mark.in_process  # the request ids' bytes, read and written by the same line reader and writer
async def test_bash_output_streams_with_the_request_id(e2e: E2E) -> None:
    async with e2e.raw() as server:
        command = "printf 'one\\n'; sleep 0.2; printf 'two\\n'"
        answer = await server.call("bash", {"command": command}, request_id="bash-7")
        assert answer["result"]["output"] == "one\ntwo"
        updates = of_type(server.events, "bash_execution_update")
        assert {u["id"] for u in updates} == {"bash-7"}
        assert "".join(u["delta"] for u in updates) == "one\ntwo\n"
        assert len(updates) >= 2  # streamed while it ran, not once at the end
        answer = await server.call("bash", {"command": "echo three"}, request_id=12)
        assert [u["delta"] for u in of_type(server.events, "bash_execution_update") if u["id"] == 12] == [
            "three\n"
        ]


@pytest.mark.in_process
async def test_summary_calls_retry_and_compaction_reports_its_cost(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"text": "ok 1"},
        {"text": "ok 2"},
        OVERLOADED,  # the branch summary's first call
        {"text": "What the left branch did."},
        {"text": "ok 3"},
        OVERLOADED,  # the compaction's first call, then one that breaks mid-stream
        {**OVERLOADED, "afterChunks": 0},
    ]
    args = ("--keep-recent-tokens", "10", "--retry-base-delay-ms", "20")
    async with e2e.server(*args, script=script) as client:
        await client.prompt("first " + "word " * 50)
        await client.prompt("second " + "word " * 50)
        first_answer = next(
            e["entryId"]
            for e in client.events_seen
            if e["type"] == "message_end" and e["message"]["role"] == "assistant"
        )
        mark = len(client.events_seen)
        navigated = await client.navigate_tree(first_answer, summarize=True)
        assert navigated.summaryEntryId is not None
        retries = [e for e in client.events_seen[mark:] if e["type"].startswith("summarization")]
        assert [e["type"] for e in retries] == [
            "summarization_retry_scheduled",
            "summarization_retry_attempt_start",
            "summarization_retry_finished",
        ]
        assert retries[1] == {"type": "summarization_retry_attempt_start", "source": "branchSummary"}

        await client.prompt("third " + "word " * 50)
        mark = len(client.events_seen)
        result = await client.compact()
        events = client.events_seen[mark:]
        assert compaction_kinds(events) == [
            "compaction_start",
            "summarization_retry_scheduled",
            "summarization_retry_attempt_start",
            "summarization_retry_scheduled",
            "summarization_retry_attempt_start",
            "summarization_retry_finished",
            "compaction_end",
        ]
        scheduled = of_type(events, "summarization_retry_scheduled")
        assert [(s["attempt"], s["maxAttempts"]) for s in scheduled] == [(1, 3), (2, 3)]
        # Failed before any output, then mid-stream: both reported as the provider said it.
        assert [s["errorMessage"] for s in scheduled] == ["overloaded", "overloaded"]
        assert all(s["delayMs"] > 0 for s in scheduled)
        attempt = of_type(events, "summarization_retry_attempt_start")[0]
        assert attempt == {
            "type": "summarization_retry_attempt_start",
            "source": "compaction",
            "reason": "manual",
        }
        end = of_type(events, "compaction_end")[0]
        assert end["result"] == result.model_dump(mode="json", exclude_none=True)
        assert end["result"]["usage"]["input"] > 0
        assert end["result"]["usage"]["output"] > 0
        assert 0 < end["result"]["estimatedTokensAfter"] < end["result"]["tokensBefore"]


@pytest.mark.in_process
async def test_a_summary_call_that_keeps_failing_fails_the_compaction(e2e: E2E) -> None:
    script: list[JsonDict] = [{"text": "ok 1"}, {"text": "ok 2"}, *[OVERLOADED] * 4]
    args = ("--keep-recent-tokens", "10", "--retry-base-delay-ms", "20")
    async with e2e.server(*args, script=script) as client:
        await client.prompt("first " + "word " * 50)
        await client.prompt("second " + "word " * 50)
        mark = len(client.events_seen)
        with pytest.raises(RpcCallError):
            await client.compact()
        events = client.events_seen[mark:]
        # Three retries (the default), then the error is final.
        assert compaction_kinds(events) == [
            "compaction_start",
            *["summarization_retry_scheduled", "summarization_retry_attempt_start"] * 3,
            "summarization_retry_finished",
            "compaction_end",
        ]
        end = of_type(events, "compaction_end")[0]
        assert end["result"] is None
        assert end["errorMessage"] == "overloaded"


@pytest.mark.in_process
async def test_an_abort_during_a_summary_retry_wait_finishes_the_retry(e2e: E2E) -> None:
    # The default delay (2 s) keeps the retry waiting until the abort lands.
    script: list[JsonDict] = [{"text": "ok 1"}, {"text": "ok 2"}, OVERLOADED]
    async with e2e.server("--keep-recent-tokens", "10", script=script) as client:
        await client.prompt("first " + "word " * 50)
        await client.prompt("second " + "word " * 50)
        mark = len(client.events_seen)
        async with anyio.create_task_group() as group:
            compact = start(group, lambda: client.call("compact"))
            await wait_event(client, "summarization_retry_scheduled", after=mark)
            assert (await client.abort()).aborted is True
            with pytest.raises(RpcCallError):
                await compact.result()
        kinds = [e["type"] for e in client.events_seen[mark:]]
        assert kinds == [
            "compaction_start",
            "summarization_retry_scheduled",
            "summarization_retry_finished",
            "compaction_end",
        ]
        end = client.events_seen[-1]
        assert (end["aborted"], end["result"]) == (True, None)
        assert [e["type"] for e in (await client.get_entries()).entries].count("compaction") == 0
