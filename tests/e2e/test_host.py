"""The host governs the agent over real pipes: approvals, client tools, giving up on requests."""

from __future__ import annotations

import json

import anyio
import pytest

from e2e.conftest import E2E, JsonDict, header_and_entries, messages_of, start, text_of, wait_event

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


def write_call(path: str, content: str) -> JsonDict:
    return {"toolCalls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


def record(asked: list[str], params: JsonDict, answer: str) -> str:
    asked.append(params["toolName"])
    return answer


def settings(e2e: E2E, data: JsonDict) -> None:
    folder = e2e.cwd / ".rpc-agent"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(data))


async def test_denied_write_leaves_no_file_and_the_model_reads_why(e2e: E2E) -> None:
    asked: list[JsonDict] = []
    script = [write_call("a.txt", "hello\n"), {"text": "Understood, I will not write it."}]
    async with e2e.server(script=script) as client:

        def approve(params: JsonDict) -> JsonDict:
            asked.append(params)
            return {"decision": "deny", "message": "not in this folder"}

        client.on_approval(approve)
        init = await client.initialize()
        assert init.client is not None
        assert init.client.approvals
        assert init.client.approvalPolicy == "writes"
        result = await client.call("prompt", {"message": "write a file"})
        assert result["stopReason"] == "stop"
        assert not (e2e.cwd / "a.txt").exists()
        (request,) = asked
        assert request["toolName"] == "write"
        assert request["preview"]["newFile"] is True
        assert "+hello" in request["preview"]["diff"]
        tool_result = result["messages"][2]
        assert tool_result["role"] == "toolResult"
        assert tool_result["isError"] is True
        assert "not in this folder" in text_of(tool_result)
        # The model's next call had the denial in its context, and it went on.
        messages = (await client.get_messages()).messages
        assert any(
            getattr(m, "role", None) == "toolResult" and "not in this folder" in json.dumps(m.model_dump())
            for m in messages
        )
        assert text_of(result["messages"][-1]) == "Understood, I will not write it."
        approval = await wait_event(client, "approval")
        assert approval["decision"] == "deny"
        assert approval["source"] == "client"


async def test_approval_params_carry_the_arguments_as_given_and_no_empty_fields(e2e: E2E) -> None:
    asked: list[JsonDict] = []
    arguments = {"command": "echo hi", "timeout": None}
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": arguments}]}, {"text": "ok"}]
    async with e2e.server(script=script) as client:

        def deny(params: JsonDict) -> JsonDict:
            asked.append(params)
            return {"decision": "deny"}

        client.on_approval(deny)
        await client.initialize()
        await client.call("prompt", {"message": "run it"})
    (request,) = asked
    assert set(request) == {"toolCallId", "toolName", "arguments", "preview"}  # no "sandbox": null
    assert request["toolName"] == "bash"
    assert request["arguments"] == arguments  # a null argument is the model's, and stays
    assert request["preview"]["command"] == "echo hi"


async def test_allow_always_asks_once(e2e: E2E) -> None:
    asked: list[str] = []
    script = [write_call("a.txt", "1"), write_call("b.txt", "2"), {"text": "done"}]
    async with e2e.server(script=script) as client:
        client.on_approval(lambda params: record(asked, params, "allow_always"))
        await client.initialize()
        result = await client.call("prompt", {"message": "write two files"})
        assert result["stopReason"] == "stop"
        assert asked == ["write"]
        assert (e2e.cwd / "a.txt").read_text() == "1"
        assert (e2e.cwd / "b.txt").read_text() == "2"


async def test_rules_decide_without_asking(e2e: E2E) -> None:
    settings(e2e, {"allow": ["bash(echo *)"], "deny": ["write(secret/**)"]})
    asked: list[str] = []
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo ruled > r.txt"}}]},
        write_call("secret/key.txt", "x"),
        {"text": "done"},
    ]
    async with e2e.server(script=script) as client:
        client.on_approval(lambda params: record(asked, params, "deny"))
        await client.initialize()
        result = await client.call("prompt", {"message": "go"})
        assert asked == []
        assert (e2e.cwd / "r.txt").read_text() == "ruled\n"
        assert not (e2e.cwd / "secret").exists()
        denied = [m for m in result["messages"] if m["role"] == "toolResult" and m["isError"]]
        assert len(denied) == 1
        assert "write(secret/**)" in text_of(denied[0])


async def test_client_tool_round_trip_with_text_and_image(e2e: E2E) -> None:
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    calls: list[JsonDict] = []
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "screenshot", "arguments": {"scale": "big"}}]},
        {"toolCalls": [{"name": "screenshot", "arguments": {"scale": 2}}]},
        {"text": "I see it."},
    ]
    async with e2e.server(script=script) as client:

        def screenshot(scale: int) -> list[JsonDict]:
            calls.append({"scale": scale})
            return [
                {"type": "text", "text": f"screen at x{scale}"},
                {"type": "image", "data": pixel, "mimeType": "image/png"},
            ]

        client.add_tool(
            screenshot,
            description="Take a screenshot of the editor.",
            parameters={
                "type": "object",
                "properties": {"scale": {"type": "integer"}},
                "required": ["scale"],
            },
            read_only=True,
        )
        # A tool without a description is offered too (under a description the server makes up).
        client.add_tool(lambda: "pong", name="ping", parameters={"type": "object"})
        init = await client.initialize()
        assert init.client is not None
        assert init.client.tools == ["screenshot", "ping"]
        result = await client.call("prompt", {"message": "look"})
        assert result["stopReason"] == "stop"
        assert calls == [{"scale": 2}]  # the call the schema forbids never reached the client
        bad, good = [m for m in result["messages"] if m["role"] == "toolResult"]
        assert bad["isError"] is True
        assert "scale" in text_of(bad)
        assert good["isError"] is False
        assert good["content"] == [
            {"type": "text", "text": "screen at x2"},
            {"type": "image", "data": pixel, "mimeType": "image/png"},
        ]
        _header, entries = header_and_entries(e2e.session_files()[0])
        stored = [e["message"] for e in messages_of(entries, "toolResult")]
        assert stored[-1]["content"][1]["mimeType"] == "image/png"


async def test_abort_during_a_pending_approval_cancels_the_request(e2e: E2E) -> None:
    script = [write_call("a.txt", "x"), {"text": "after"}]
    async with e2e.server(script=script) as client, anyio.create_task_group() as group:
        asked = anyio.Event()

        async def wait_forever(params: JsonDict) -> str:
            asked.set()
            await anyio.sleep_forever()
            return "allow"

        client.on_approval(wait_forever)
        await client.initialize()
        run = start(group, lambda: client.call("prompt", {"message": "write"}))
        with anyio.fail_after(30):
            await asked.wait()
        await client.abort()
        result = await run.result()
        assert result["stopReason"] == "aborted"
        failed = await wait_event(client, "host_request_failed")
        assert failed["reason"] == "aborted"
        assert failed["method"] == "approval/request"
        # $/cancelRequest went out before the event that tells of it.
        assert failed["requestId"] in client.cancelled_requests
        assert not (e2e.cwd / "a.txt").exists()
        state = await client.get_state()
        assert state.isStreaming is False
        # The session is consistent: the call got its (aborted) result, and a new prompt runs.
        tool_results = [m for m in result["messages"] if m["role"] == "toolResult"]
        assert len(tool_results) == 1
        assert tool_results[0]["isError"] is True
        again = await client.call("prompt", {"message": "hello again"})
        assert again["stopReason"] == "stop"


async def test_a_hook_timeout_cancels_the_request_and_changes_nothing(e2e: E2E) -> None:
    settings(e2e, {"hookTimeoutSeconds": 0.3})
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo ran > t.txt"}}]},
        {"text": "ok"},
    ]
    async with e2e.server(script=script) as client:

        async def slow(event: JsonDict) -> JsonDict:
            await anyio.sleep_forever()
            return {"block": True}

        client.on_hook("tool_call", slow)
        await client.initialize()
        result = await client.call("prompt", {"message": "go"})
        assert result["stopReason"] == "stop"
        assert (e2e.cwd / "t.txt").read_text() == "ran\n"
        failed = await wait_event(client, "host_request_failed")
        assert failed["reason"] == "timeout"
        assert failed["fallback"] == "no_change"
        assert failed["requestId"] in client.cancelled_requests


async def test_garbage_answers_do_not_break_the_run(e2e: E2E) -> None:
    script: list[JsonDict] = [write_call("a.txt", "x"), {"text": "fine"}]
    async with e2e.server(script=script) as client:
        client.on_approval(lambda params: {"decision": "maybe"})
        client.on_hook("tool_result", lambda event: "not an object")
        client.on_hook("context", lambda event: {"messages": [{"role": 42}]})

        def broken(event: JsonDict) -> JsonDict:
            raise RuntimeError("the extension crashed")

        client.on_hook("before_agent_start", broken)  # answered with a JSON-RPC error
        await client.initialize()
        result = await client.call("prompt", {"message": "go"})
        assert result["stopReason"] == "stop"
        assert not (e2e.cwd / "a.txt").exists()
        failures = {e["method"]: e for e in client.events_seen if e["type"] == "host_request_failed"}
        assert set(failures) >= {"approval/request", "hook/context", "hook/before_agent_start"}
        assert failures["approval/request"]["reason"] == "invalid_result"
        assert failures["approval/request"]["fallback"] == "denied"
        assert failures["hook/context"]["reason"] == "invalid_result"
        assert failures["hook/before_agent_start"]["reason"] == "error"
        assert "the extension crashed" in failures["hook/before_agent_start"]["message"]


async def test_prompt_limits_stop_the_run_over_json_rpc(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "ls", "arguments": {}}], "usage": {"costUsd": 1.0}} for _ in range(6)
    ]
    async with e2e.server(script=script) as client:
        await client.initialize()
        turns = await client.prompt("loop", max_turns=2)
        assert turns.stopReason == "max_turns"
        assert turns.errorMessage is not None
        assert "2 turns" in turns.errorMessage
        budget = await client.prompt("loop", max_budget_usd=1.5)
        assert budget.stopReason == "max_budget"
        assert sum(1 for m in budget.messages or [] if getattr(m, "role", None) == "assistant") == 2


async def test_set_client_tools_replaces_the_list_and_unmarked_tools_need_approval(e2e: E2E) -> None:
    asked: list[str] = []
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "deploy", "arguments": {"target": "prod"}}]},
        {"text": "deployed"},
    ]
    async with e2e.server(script=script) as client:
        client.on_approval(lambda params: record(asked, params, "allow"))
        init = await client.initialize()
        assert init.client is not None
        assert init.client.tools == []
        client.add_tool(
            lambda target: f"deployed to {target}",
            name="deploy",
            description="Deploy the app.",
            parameters={"type": "object", "properties": {"target": {"type": "string"}}},
        )
        assert (await client.set_client_tools())["tools"] == ["deploy"]
        result = await client.call("prompt", {"message": "ship it"})
        assert asked == ["deploy"]  # not marked read-only: the 'writes' policy asks
        assert text_of(result["messages"][2]) == "deployed to prod"
