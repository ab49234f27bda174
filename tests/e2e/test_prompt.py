"""Handshake, state, and one prompt seen from outside: result, events in order, the file on disk."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from e2e.conftest import (
    CHECKPOINT_EVENTS,
    E2E,
    event_types,
    expect_error,
    header_and_entries,
    messages_of,
    text_of,
)
from rpc_agent.methods.handlers import Methods
from rpc_agent.server import errors as codes

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


async def test_initialize_lists_every_method_and_the_state(e2e: E2E) -> None:
    async with e2e.server() as client:
        init = await client.initialize("e2e")
        registered = [spec.name for spec in Methods.for_docs().registry.methods]
        assert init.methods == registered
        assert {"prompt", "navigate_tree", "get_tree", "fork", "compact", "shutdown"} <= set(init.methods)
        assert init.capabilities.providers == ["faux"]
        assert init.capabilities.errorCodes["AGENT_BUSY"] == -32001
        assert init.serverInfo.name == "rpc-agent"

        state = await client.get_state()
        assert init.state.sessionId == state.sessionId
        assert state.cwd == str(e2e.cwd)
        assert state.sessionFile is not None
        assert Path(state.sessionFile).is_relative_to(e2e.session_root)
        assert state.sessionName is None
        assert state.leafId is None
        assert state.model is not None
        assert state.model.id == "faux-1"
        assert state.model.contextWindow == 200_000
        assert state.thinkingLevel == "off"
        assert state.isStreaming is False
        assert state.isCompacting is False
        assert state.autoCompaction is True
        assert state.autoRetry is True
        assert state.steeringMode == "one-at-a-time"
        assert state.followUpMode == "one-at-a-time"
        assert state.messageCount == 0
        assert state.pendingMessageCount == 0
        # Nothing is written before the first answer.
        assert not Path(state.sessionFile).exists()


async def test_prompt_resolves_with_the_run_and_streams_events_in_order(e2e: E2E) -> None:
    script = [{"thinking": "let me think", "text": "Hello there, friend."}]
    async with e2e.server(script=script) as client:
        result = await client.call("prompt", {"message": "Say hello"})
        assert result["queued"] is False
        assert result["stopReason"] == "stop"
        assert result["errorMessage"] is None
        messages = result["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert messages[0]["content"] == "Say hello"
        assistant = messages[1]
        assert text_of(assistant) == "Hello there, friend."
        assert [b["type"] for b in assistant["content"]] == ["thinking", "text"]
        assert assistant["usage"]["input"] > 0

        events = [e for e in client.events_seen if e["type"] not in CHECKPOINT_EVENTS]
        types = event_types(events)
        first_update = types.index("message_update")
        last_update = len(types) - 1 - types[::-1].index("message_update")
        assert types[:first_update] == [
            "agent_start",
            "message_start",
            "message_end",
            "turn_start",
            "message_start",
        ]
        assert set(types[first_update : last_update + 1]) == {"message_update"}
        assert types[last_update + 1 :] == ["message_end", "turn_end", "agent_end", "agent_settled"]

        user_start, user_end = events[1], events[2]
        assert user_start["message"]["role"] == "user"
        assert user_end["message"]["content"] == "Say hello"
        assistant_end = events[last_update + 1]
        assert assistant_end["message"] == assistant

        deltas = [e["assistantMessageEvent"] for e in events[first_update : last_update + 1]]
        kinds = [d["type"] for d in deltas]
        assert kinds[0] == "start"
        assert kinds[-1] == "done"
        assert kinds.index("thinking_start") < kinds.index("thinking_end") < kinds.index("text_start")
        text = "".join(d["delta"] for d in deltas if d["type"] == "text_delta")
        thinking = "".join(d["delta"] for d in deltas if d["type"] == "thinking_delta")
        assert text == "Hello there, friend."
        assert thinking == "let me think"
        assert events[-2]["messages"] == messages
        assert events[last_update + 2]["message"] == assistant
        assert events[last_update + 2]["toolResults"] == []

        # The file holds both entries, with the ids the events announced, before the answer.
        state = await client.get_state()
        assert state.sessionFile is not None
        header, entries = header_and_entries(Path(state.sessionFile))
        assert header["version"] == 3
        assert header["id"] == state.sessionId
        assert header["cwd"] == str(e2e.cwd)
        stored = messages_of(entries)
        assert [e["id"] for e in stored] == [user_end["entryId"], assistant_end["entryId"]]
        # Before them, as pi starts a session: its model, then its thinking level.
        first_model, first_level = entries[0], entries[1]
        assert (first_model["type"], first_model["parentId"], first_model["provider"]) == (
            "model_change",
            None,
            "faux",
        )
        assert (first_level["type"], first_level["parentId"]) == ("thinking_level_change", first_model["id"])
        assert stored[0]["parentId"] == first_level["id"]
        assert stored[1]["parentId"] == stored[0]["id"]
        assert stored[1]["message"] == assistant
        assert state.leafId == assistant_end["entryId"]
        assert state.messageCount == 2

        # Reading methods agree with the file.
        assert (await client.call("get_messages"))["messages"] == messages
        assert await client.get_last_assistant_text() == "Hello there, friend."
        got = await client.call("get_entries")
        assert got["entries"] == entries
        assert got["leafId"] == state.leafId
        since = await client.call("get_entries", {"since": user_end["entryId"]})
        assert [e["id"] for e in since["entries"]] == [assistant_end["entryId"]]
        stats = await client.get_session_stats()
        assert (stats.userMessages, stats.assistantMessages, stats.totalMessages) == (1, 1, 2)
        assert stats.tokens.input == assistant["usage"]["input"]


async def test_echo_replies_after_the_script_and_a_second_prompt_continues_the_branch(e2e: E2E) -> None:
    async with e2e.server(script=[{"text": "scripted"}]) as client:
        first = await client.call("prompt", {"message": "one"})
        second = await client.call("prompt", {"message": "two"})
        assert text_of(first["messages"][1]) == "scripted"
        assert text_of(second["messages"][1]) == "Echo: two"
        messages = (await client.call("get_messages"))["messages"]
        assert [text_of(m) for m in messages] == ["one", "scripted", "two", "Echo: two"]
        await client.set_session_name("  my session  ")
        assert (await client.get_state()).sessionName == "my session"
        fork_points = (await client.get_fork_messages()).messages
        assert [p.text for p in fork_points] == ["one", "two"]
        exported = await client.call("export_html", {"outputPath": str(e2e.root / "out.html")})
        page = Path(exported["path"]).read_text()
        assert "Echo: two" in page


async def test_images_are_stored_as_blobs_and_served_whole(e2e: E2E) -> None:
    image = {"type": "image", "data": base64.b64encode(os.urandom(3000)).decode(), "mimeType": "image/png"}
    async with e2e.server() as client:
        await expect_error(
            client.call("prompt", {"message": "look", "images": [{"type": "image", "data": "x"}]}),
            codes.INVALID_PARAMS,
        )
        result = await client.call("prompt", {"message": "look", "images": [image]})
        user = result["messages"][0]
        assert user["content"] == [{"type": "text", "text": "look"}, image]
        assert text_of(result["messages"][1]) == "Echo: look"
        state = await client.get_state()
        assert state.sessionFile is not None
        session_file = Path(state.sessionFile)
        _, entries = header_and_entries(session_file)
        stored = messages_of(entries, "user")[0]["message"]["content"][1]
        assert stored["data"].startswith("blob:sha256:")
        assert image["data"].encode() not in session_file.read_bytes()
        assert (e2e.home / "blobs" / stored["data"].removeprefix("blob:sha256:")).is_file()
        messages = (await client.call("get_messages"))["messages"]
        assert messages[0]["content"][1] == image
    async with e2e.server("--session", str(session_file)) as client:
        messages = (await client.call("get_messages"))["messages"]
        assert messages[0]["content"][1] == image
