"""Settings methods, and automatic retries of transient provider errors.

Where ``abort_retry`` and ``abort`` must land in the wait before a retry, the delay stays at its
default (2 s); a retry that is waited out asks for a short one (the error's ``retryAfterMs``, or
``--retry-base-delay-ms``).
"""

from __future__ import annotations

import anyio
import pytest

from e2e.conftest import E2E, JsonDict, expect_error, start, text_of, wait_event
from rpc_agent.server import errors as codes

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


async def test_model_thinking_and_queue_settings(e2e: E2E) -> None:
    async with e2e.server() as client:
        models = (await client.call("get_available_models"))["models"]
        assert [m["id"] for m in models] == ["faux-1", "faux-mini"]
        assert models[1]["contextWindow"] == 32_000

        await client.call("prompt", {"message": "hello"})
        chosen = await client.call("set_model", {"modelId": "faux-mini"})
        assert chosen["id"] == "faux-mini"
        assert (await client.get_state()).model.id == "faux-mini"  # type: ignore[union-attr]
        cycled = await client.call("cycle_model")
        assert cycled["model"]["id"] == "faux-1"
        assert cycled["thinkingLevel"] == "off"
        # An unknown id is refused with the ids that exist; so is another provider.
        unknown = await expect_error(
            client.call("set_model", {"modelId": "faux-future"}), codes.INVALID_PARAMS
        )
        assert "faux-future" in unknown.message
        assert "faux-1, faux-mini" in unknown.message
        other = await expect_error(
            client.call("set_model", {"modelId": "faux-mini", "provider": "anthropic"}), codes.INVALID_PARAMS
        )
        assert "anthropic" in other.message
        assert "faux" in other.message
        assert (await client.get_state()).model.id == "faux-1"  # type: ignore[union-attr]
        chosen = await client.call("set_model", {"modelId": "faux-mini", "provider": "faux"})
        assert chosen["id"] == "faux-mini"

        assert await client.call("set_thinking_level", {"level": "high"}) == {}
        assert (await client.get_state()).thinkingLevel == "high"
        assert (await client.call("cycle_thinking_level"))["level"] == "xhigh"
        assert (await client.call("cycle_thinking_level"))["level"] == "max"
        assert (await client.call("cycle_thinking_level"))["level"] == "off"
        await expect_error(client.call("set_thinking_level", {"level": "extreme"}), codes.INVALID_PARAMS)

        entries = (await client.call("get_entries"))["entries"]
        changes = [
            (e["type"], e.get("modelId") or e.get("thinkingLevel"))
            for e in entries
            if e["type"] in ("model_change", "thinking_level_change")
        ]
        assert changes == [
            # The first prompt's: a new session's model and thinking level, as pi writes them.
            ("model_change", "faux-1"),
            ("thinking_level_change", "off"),
            ("model_change", "faux-mini"),
            ("model_change", "faux-1"),
            ("model_change", "faux-mini"),
            ("thinking_level_change", "high"),
            ("thinking_level_change", "xhigh"),
            ("thinking_level_change", "max"),
            ("thinking_level_change", "off"),
        ]
        # The next answer comes from the chosen model.
        result = await client.call("prompt", {"message": "which model?"})
        assert result["messages"][-1]["model"] == "faux-mini"

        for method, field, value in [
            ("set_steering_mode", "steeringMode", "all"),
            ("set_follow_up_mode", "followUpMode", "all"),
            ("set_auto_compaction", "autoCompaction", False),
            ("set_auto_retry", "autoRetry", False),
        ]:
            params = {"mode": value} if isinstance(value, str) else {"enabled": value}
            assert await client.call(method, params) == {}
            assert getattr(await client.get_state(), field) == value
        await expect_error(client.call("set_steering_mode", {"mode": "sometimes"}), codes.INVALID_PARAMS)

    # A new server on the same session picks the model and thinking level up from the file.
    state_file = e2e.session_files()
    assert len(state_file) == 1
    async with e2e.server("--session", str(state_file[0])) as client:
        state = await client.get_state()
        assert state.model is not None
        assert state.model.id == "faux-mini"
        assert state.thinkingLevel == "off"


async def test_an_empty_session_name_clears_the_name(e2e: E2E) -> None:
    async with e2e.server() as client:
        await client.call("prompt", {"message": "hello"})
        assert await client.call("set_session_name", {"name": "Refactor"}) == {}
        assert (await client.get_state()).sessionName == "Refactor"
        assert await client.call("set_session_name", {"name": ""}) == {}
        assert (await client.get_state()).sessionName is None
        listed = (await client.call("list_sessions"))["sessions"]
        assert [s.get("name") for s in listed] == [None]
    async with e2e.server("--session", str(e2e.session_files()[0])) as client:
        assert (await client.get_state()).sessionName is None


async def test_steering_all_at_once_and_follow_ups_one_at_a_time(e2e: E2E) -> None:
    gate = e2e.root / "go"
    command = f"while [ ! -e {gate} ]; do sleep 0.02; done"
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}]
    async with e2e.server(script=script) as client:
        await client.call("set_steering_mode", {"mode": "all"})
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "go"}))
            await wait_event(client, "tool_execution_start")
            await client.follow_up("three")
            await client.steer("one")
            assert (await client.prompt("two", streaming_behavior="steer")).queued is True
            assert (await client.follow_up("four")).pendingMessageCount == 4
            gate.touch()
            result = await prompt.result()
        texts = [(m["role"], text_of(m)) for m in result["messages"]]
        assert texts[3:] == [
            ("user", "one"),
            ("user", "two"),
            ("assistant", "Echo: two"),
            ("user", "three"),
            ("assistant", "Echo: three"),
            ("user", "four"),
            ("assistant", "Echo: four"),
        ]


async def test_auto_retry_then_abort_retry_and_abort(e2e: E2E) -> None:
    overloaded = {"error": "overloaded", "status": 529, "retryable": True}
    script: list[JsonDict] = [
        {**overloaded, "retryAfterMs": 20},
        {"text": "recovered"},
        overloaded,
        overloaded,
        {"text": "after the aborted retries"},
    ]
    async with e2e.server(script=script) as client:
        # A transient error, then success: one retry after the delay the error asked for.
        mark = len(client.events_seen)
        result = await client.call("prompt", {"message": "try"})
        assert result["stopReason"] == "stop"
        assert [m["role"] for m in result["messages"]] == ["user", "assistant"]
        assert text_of(result["messages"][-1]) == "recovered"
        events = client.events_seen[mark:]
        retries = [e for e in events if e["type"].startswith("auto_retry")]
        assert retries[0]["type"] == "auto_retry_start"
        assert retries[0]["attempt"] == 1
        assert retries[0]["maxAttempts"] == 3
        assert retries[0]["errorMessage"] == "overloaded"
        assert retries[0]["delayMs"] > 0
        assert retries[1] == {"type": "auto_retry_end", "success": True, "attempt": 1}
        # Nothing is announced or stored for the failed attempt.
        assert [e["message"]["role"] for e in events if e["type"] == "message_end"] == ["user", "assistant"]

        # Nothing to stop when no retry is waiting.
        assert (await client.call("abort_retry")) == {"aborted": False}

        # abort_retry during the wait: the run ends, the error is kept as an aborted message.
        mark = len(client.events_seen)
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "again"}))
            await wait_event(client, "auto_retry_start", after=mark)
            assert await client.call("abort_retry") == {"aborted": True}
            result = await prompt.result()
        assert result["stopReason"] == "aborted"
        assert result["messages"][-1]["errorMessage"] == "retry aborted"
        end = await wait_event(client, "auto_retry_end", after=mark)
        assert end["success"] is False

        # abort during the wait: the client hears auto_retry_end too.
        mark = len(client.events_seen)
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "once more"}))
            await wait_event(client, "auto_retry_start", after=mark)
            assert (await client.abort()).aborted is True
            result = await prompt.result()
        assert result["stopReason"] == "aborted"
        end = await wait_event(client, "auto_retry_end", after=mark)
        assert end["success"] is False
        # The turn ends with an aborted answer, stored like any abort.
        assert result["messages"][-1]["stopReason"] == "aborted"
        turn_end = await wait_event(client, "turn_end", after=mark)
        assert turn_end["message"] == result["messages"][-1]

        # With retries off, the error is final at once.
        await client.call("set_auto_retry", {"enabled": False})
        result = await client.call("prompt", {"message": "no retries"})
        assert text_of(result["messages"][-1]) == "after the aborted retries"


async def test_errors_that_are_not_retried(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"error": "invalid api key", "status": 401},
        {
            "text": "partial answer that breaks",
            "error": "connection reset",
            "retryable": True,
            "afterChunks": 2,
        },
        {"error": "overloaded again", "status": 529, "retryable": True, "afterChunks": 0},
        {"text": "fine"},
    ]
    async with e2e.server("--retry-base-delay-ms", "20", script=script) as client:
        result = await client.call("prompt", {"message": "first"})
        assert result["stopReason"] == "error"
        assert result["errorMessage"] == "invalid api key"
        assert [m["role"] for m in result["messages"]] == ["user", "assistant"]
        assert result["messages"][-1]["stopReason"] == "error"
        assert not [e for e in client.events_seen if e["type"].startswith("auto_retry")]

        # Broke after some text arrived: kept as it is, not retried.
        result = await client.call("prompt", {"message": "second"})
        assert result["stopReason"] == "error"
        assert text_of(result["messages"][-1]) == "partial answer "
        assert result["messages"][-1]["errorMessage"] == "connection reset"
        assert not [e for e in client.events_seen if e["type"].startswith("auto_retry")]

        # Broke before anything useful, retryable: retried (after the configured delay).
        mark = len(client.events_seen)
        result = await client.call("prompt", {"message": "third"})
        assert result["stopReason"] == "stop"
        assert text_of(result["messages"][-1]) == "fine"
        retries = [e["type"] for e in client.events_seen[mark:] if e["type"].startswith("auto_retry")]
        assert retries == ["auto_retry_start", "auto_retry_end"]
        # The broken attempt's message is closed for the client but not stored (no entryId).
        ends = [
            (e["message"]["role"], e["message"].get("stopReason"), "entryId" in e)
            for e in client.events_seen[mark:]
            if e["type"] == "message_end"
        ]
        assert ends == [("user", None, True), ("assistant", "error", False), ("assistant", "stop", True)]
        messages = (await client.call("get_messages"))["messages"]
        assert [m.get("stopReason") for m in messages if m["role"] == "assistant"] == [
            "error",
            "error",
            "stop",
        ]
