"""pi's extension hooks answered by the client over JSON-RPC, applied as pi applies them."""

from __future__ import annotations

import anyio
import pytest

from e2e.conftest import E2E, JsonDict, header_and_entries, start, text_of, wait_event
from rpc_agent_client import RpcCallError

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


def entries_of(e2e: E2E) -> list[JsonDict]:
    return header_and_entries(e2e.session_files()[0])[1]


async def test_tree_hook_supplies_the_summary_without_a_model_call(e2e: E2E) -> None:
    events: list[JsonDict] = []
    script: list[JsonDict] = [{"text": "first answer"}, {"text": "second answer"}, {"text": "NEXT"}]
    async with e2e.server(script=script) as client:

        def before_tree(event: JsonDict) -> JsonDict:
            events.append(event)
            return {
                "summary": {"summary": "The host's summary", "details": {"by": "host"}},
                "label": "from-hook",
            }

        client.on_hook("session_before_tree", before_tree)
        await client.initialize()
        first = await client.call("prompt", {"message": "one"})
        await client.call("prompt", {"message": "two"})
        target = first["messages"][1]  # the first answer
        entry_id = next(e["id"] for e in entries_of(e2e) if e.get("message") == target)
        result = await client.navigate_tree(entry_id, summarize=True)
        assert result.cancelled is False
        assert result.summaryEntryId is not None
        (event,) = events
        assert event["type"] == "session_before_tree"
        preparation = event["preparation"]
        assert preparation["targetId"] == entry_id
        assert preparation["userWantsSummary"] is True
        assert [e["message"]["role"] for e in preparation["entriesToSummarize"]] == ["user", "assistant"]
        summary = next(e for e in entries_of(e2e) if e["type"] == "branch_summary")
        assert summary["summary"] == "The host's summary"
        assert summary["fromHook"] is True
        assert summary["details"] == {"by": "host"}
        labels = [e for e in entries_of(e2e) if e["type"] == "label"]
        assert labels[-1]["targetId"] == summary["id"]
        assert labels[-1]["label"] == "from-hook"
        after = await wait_event(client, "session_tree")
        assert after["fromExtension"] is True
        assert after["summaryEntry"]["id"] == summary["id"]
        # No summary call consumed the script: the next prompt gets the next scripted reply.
        nxt = await client.call("prompt", {"message": "three"})
        assert text_of(nxt["messages"][-1]) == "NEXT"


async def test_a_cancelled_navigation_changes_nothing(e2e: E2E) -> None:
    async with e2e.server() as client:
        client.on_hook("session_before_tree", lambda event: {"cancel": True})
        await client.initialize()
        first = await client.call("prompt", {"message": "one"})
        await client.call("prompt", {"message": "two"})
        before = entries_of(e2e)
        leaf = (await client.get_state()).leafId
        target = next(e["id"] for e in before if e.get("message") == first["messages"][1])
        result = await client.navigate_tree(target, summarize=True, label="x")
        assert result.cancelled is True
        assert (await client.get_state()).leafId == leaf
        assert entries_of(e2e) == before


async def test_compaction_from_the_hook_is_stored_and_a_cancel_appends_nothing(e2e: E2E) -> None:
    answers: list[JsonDict] = [{"cancel": True}]
    folder = e2e.cwd / ".rpc-agent"
    folder.mkdir()
    (folder / "settings.json").write_text('{"compaction": {"keepRecentTokens": 10}}')
    async with e2e.server() as client:

        def before_compact(event: JsonDict) -> JsonDict:
            return (
                answers.pop(0)
                if answers
                else {
                    "compaction": {
                        "summary": "compacted by the host",
                        "firstKeptEntryId": event["preparation"]["firstKeptEntryId"],
                        "tokensBefore": 1234,
                        "details": {"host": True},
                    }
                }
            )

        client.on_hook("session_before_compact", before_compact)
        await client.initialize()
        for text in ("one", "two", "three"):
            await client.call("prompt", {"message": text * 200})
        before = entries_of(e2e)
        with pytest.raises(RpcCallError, match="cancelled by the client's hook"):
            await client.call("compact", {})
        assert entries_of(e2e) == before
        result = await client.call("compact", {})
        assert result["summary"] == "compacted by the host"
        compaction = next(e for e in entries_of(e2e) if e["type"] == "compaction")
        assert compaction["fromHook"] is True
        assert compaction["tokensBefore"] == 1234
        assert compaction["details"] == {"host": True}
        after = await wait_event(client, "session_compact")
        assert after["fromExtension"] is True


async def test_switch_and_fork_hooks_can_cancel(e2e: E2E) -> None:
    seen: list[JsonDict] = []

    def cancel(event: JsonDict) -> JsonDict:
        seen.append(event)
        return {"cancel": True}

    async with e2e.server() as client:
        client.on_hook("session_before_switch", cancel)
        client.on_hook("session_before_fork", cancel)
        await client.initialize()
        first = await client.call("prompt", {"message": "one"})
        state = await client.get_state()
        new = await client.new_session()
        assert new.cancelled is True
        assert new.sessionId == state.sessionId
        user_id = next(e["id"] for e in entries_of(e2e) if e.get("message") == first["messages"][0])
        fork = await client.fork(user_id)
        assert fork.cancelled is True
        assert fork.sessionId == state.sessionId
        assert [e["type"] for e in seen] == ["session_before_switch", "session_before_fork"]
        assert seen[0]["reason"] == "new"
        assert seen[1] == {"type": "session_before_fork", "entryId": user_id, "position": "before"}
        assert len(e2e.session_files()) == 1


async def test_clone_and_resume_hooks_name_what_they_would_change_to(e2e: E2E) -> None:
    seen: list[JsonDict] = []

    def cancel_clone_and_resume(event: JsonDict) -> JsonDict:
        seen.append(event)
        return {"cancel": event["type"] == "session_before_fork" or event.get("reason") == "resume"}

    async with e2e.server() as client:
        client.on_hook("session_before_switch", cancel_clone_and_resume)
        client.on_hook("session_before_fork", cancel_clone_and_resume)
        await client.initialize()
        await client.call("prompt", {"message": "one"})
        first = await client.get_state()
        assert first.sessionFile is not None
        assert first.leafId is not None
        clone = await client.clone()
        assert clone.cancelled is True
        new = await client.new_session()
        assert new.cancelled is False
        assert new.sessionId != first.sessionId
        resume = await client.switch_session(first.sessionFile)
        assert resume.cancelled is True
        assert resume.sessionId == new.sessionId
        assert seen == [
            {"type": "session_before_fork", "entryId": first.leafId, "position": "at"},
            {"type": "session_before_switch", "reason": "new"},
            {"type": "session_before_switch", "reason": "resume", "targetSessionFile": first.sessionFile},
        ]


async def test_tool_hooks_block_patch_and_replace(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo blocked > b.txt"}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo original > p.txt"}}]},
        {"text": "done"},
    ]
    async with e2e.server(script=script) as client:

        def tool_call(event: JsonDict) -> JsonDict:
            if "blocked" in event["input"]["command"]:
                return {"block": True, "reason": "no blocked files"}
            return {"input": {"command": "echo patched > p.txt"}}

        def tool_result(event: JsonDict) -> JsonDict | None:
            if event["isError"]:
                return None
            return {"content": [{"type": "text", "text": "replaced output"}], "details": {"hooked": True}}

        client.on_hook("tool_call", tool_call)
        client.on_hook("tool_result", tool_result)
        await client.initialize()
        result = await client.call("prompt", {"message": "go"})
        assert not (e2e.cwd / "b.txt").exists()
        assert (e2e.cwd / "p.txt").read_text() == "patched\n"
        blocked, patched = [m for m in result["messages"] if m["role"] == "toolResult"]
        assert blocked["isError"] is True
        assert text_of(blocked) == "no blocked files"
        assert text_of(patched) == "replaced output"
        assert patched["details"] == {"hooked": True}


async def test_input_before_agent_start_and_context_hooks(e2e: E2E) -> None:
    async with e2e.server() as client:

        def on_input(event: JsonDict) -> JsonDict:
            if event["text"] == "/local":
                return {"action": "handled"}
            return {"action": "transform", "text": event["text"].upper()}

        def before_start(event: JsonDict) -> JsonDict:
            assert event["prompt"] == "HELLO"
            assert event["systemPrompt"]
            return {"message": {"customType": "note", "content": "injected by the host", "display": False}}

        def context(event: JsonDict) -> JsonDict:
            return {"messages": [*event["messages"], {"role": "user", "content": "replaced", "timestamp": 1}]}

        client.on_hook("input", on_input)
        client.on_hook("before_agent_start", before_start)
        client.on_hook("context", context)
        await client.initialize()
        handled = await client.call("prompt", {"message": "/local"})
        assert handled["stopReason"] == "handled"
        await wait_event(client, "input_handled")
        result = await client.call("prompt", {"message": "hello"})
        kinds = [m["role"] for m in result["messages"]]
        assert kinds == ["user", "custom", "assistant"]
        assert text_of(result["messages"][0]) == "HELLO"
        # The context hook's messages were what the model saw (the faux model echoes the last user text).
        assert text_of(result["messages"][-1]) == "Echo: replaced"
        entries = entries_of(e2e)
        custom = next(e for e in entries if e["type"] == "custom_message")
        assert custom["customType"] == "note"
        assert custom["display"] is False
        # The replaced context is not stored: the file holds the real prompt only.
        assert not any(e.get("message", {}).get("content") == "replaced" for e in entries)
        # Host-made entries: a custom entry never reaches the model; a custom message does.
        await client.append_custom_entry("state", {"n": 1})
        await client.send_custom_message("ping", "from the host", trigger_turn=False)
        entries = entries_of(e2e)
        assert entries[-2]["type"] == "custom"
        assert entries[-2]["data"] == {"n": 1}
        assert entries[-1]["type"] == "custom_message"
        messages = [m.model_dump() for m in (await client.get_messages()).messages]
        assert any(m.get("customType") == "ping" for m in messages)
        assert not any(m.get("customType") == "state" for m in messages)


async def test_a_custom_message_sent_during_a_run_steers_it(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 0.5; echo slow"}}]},
        {"text": "the answer, with the host's message in view"},
    ]
    async with e2e.server(script=script) as client, anyio.create_task_group() as group:
        run = start(group, lambda: client.call("prompt", {"message": "go"}))
        await wait_event(client, "tool_execution_start")
        assert await client.send_custom_message("editor", "The user saved a file.") is None
        result = await run.result()
        kinds = [m["role"] for m in result["messages"]]
        assert kinds == ["user", "assistant", "toolResult", "custom", "assistant"]
        assert result["messages"][3]["content"] == "The user saved a file."
        custom = next(e for e in entries_of(e2e) if e["type"] == "custom_message")
        assert custom["customType"] == "editor"


async def test_a_hook_that_answers_nothing_changes_nothing_and_reports_nothing(e2e: E2E) -> None:
    async with e2e.server() as client:
        client.on_hook("input", lambda event: None)  # the client sends {}
        client.on_hook("tool_call", lambda event: None)
        await client.initialize()
        result = await client.call("prompt", {"message": "hi"})
        assert text_of(result["messages"][-1]) == "Echo: hi"
        assert not [e for e in client.events_seen if e["type"] == "host_request_failed"]
