"""Compaction rules (cut points, split turns, repeated compaction, branches) and the AgentSession
paths that run them (manual, threshold, overflow, failure, abort), with the faux provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_testlib import Recorder

from pi_lines import tool_result
from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.branch_summary import generate_branch_summary
from rpc_agent.agent.compaction import (
    CompactionPreparation,
    context_tokens,
    cumulative_file_operations,
    estimate_tokens,
    prepare_compaction,
)
from rpc_agent.agent.settings import AgentSettings, CompactionSettings
from rpc_agent.errors import NothingToCompactError, OperationCancelledError, ProviderError
from rpc_agent.protocol.shapes import BlockDict, EntryDict, MessageDict
from rpc_agent.providers.faux import FauxProvider, FauxReply
from rpc_agent.store import SessionManager

JsonDict = dict[str, Any]


def msg(entry_id: str, parent: str | None, message: MessageDict) -> EntryDict:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
    }


def user(text: str) -> MessageDict:
    return {"role": "user", "content": text, "timestamp": 1}


def assistant(text: str, *, calls: list[BlockDict] | None = None, usage: int = 0) -> MessageDict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}, *(calls or [])],
        "provider": "faux",
        "model": "faux-1",
        "usage": {
            "input": usage,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": usage,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 1,
    }


def chain(*messages: MessageDict) -> list[EntryDict]:
    entries: list[EntryDict] = []
    parent: str | None = None
    for index, message in enumerate(messages):
        entry_id = f"e{index:07d}"
        entries.append(msg(entry_id, parent, message))
        parent = entry_id
    return entries


TEXT_400 = "x" * 400  # 100 tokens


def test_estimate_counts_text_tool_arguments_and_images() -> None:
    assert estimate_tokens(user("abcd" * 10)) == 10
    call: BlockDict = {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "a.py"}}
    assert estimate_tokens(assistant("", calls=[call])) > 0
    image: MessageDict = {
        "role": "user",
        "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "timestamp": 1,
    }
    assert estimate_tokens(image) == 1200


def test_context_tokens_uses_last_usage_plus_estimates_after_it() -> None:
    messages = [user(TEXT_400), assistant("ok", usage=5000), user(TEXT_400)]
    assert context_tokens(messages) == 5000 + 100
    assert context_tokens([user(TEXT_400)]) == 100


def test_cut_point_is_never_a_tool_result() -> None:
    call: BlockDict = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "big.py"}}
    path = chain(
        user(TEXT_400),
        assistant(TEXT_400),
        user(TEXT_400),
        assistant("reading", calls=[call]),
        tool_result("c1", TEXT_400 * 3, timestamp=1),
        assistant(TEXT_400),
    )
    prep = prepare_compaction(path, keep_recent_tokens=350, tokens_before=1000)
    kept_index = next(i for i, e in enumerate(path) if e["id"] == prep.first_kept_entry_id)
    assert path[kept_index]["message"]["role"] != "toolResult"
    # The tool result went into the summary together with its call: none is left orphaned.
    kept_roles = [e["message"]["role"] for e in path[kept_index:]]
    assert kept_roles == ["assistant"]
    summarized = [m["role"] for m in prep.messages_to_summarize + prep.turn_prefix_messages]
    assert summarized.count("toolResult") == 1
    assert "assistant" in summarized


def test_turn_boundary_cut_summarizes_whole_turns_only() -> None:
    path = chain(user(TEXT_400), assistant(TEXT_400), user(TEXT_400), assistant(TEXT_400))
    prep = prepare_compaction(path, keep_recent_tokens=150, tokens_before=400)
    assert prep.first_kept_entry_id == path[2]["id"]
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant"]
    assert not prep.is_split_turn


def test_split_turn_summarizes_the_turn_prefix_separately() -> None:
    call: BlockDict = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}
    path = chain(
        user(TEXT_400),
        assistant(TEXT_400),
        user("one huge turn"),
        assistant(TEXT_400, calls=[call]),
        tool_result("c1", TEXT_400 * 4, timestamp=1),
        assistant(TEXT_400 * 2),
    )
    prep = prepare_compaction(path, keep_recent_tokens=150, tokens_before=2000)
    assert prep.first_kept_entry_id == path[5]["id"]
    assert prep.is_split_turn
    assert [m["role"] for m in prep.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant"]


def test_nothing_to_compact_when_everything_fits() -> None:
    with pytest.raises(NothingToCompactError):
        prepare_compaction(chain(user("hi"), assistant("hello")), keep_recent_tokens=20_000, tokens_before=10)


def test_repeated_compaction_starts_at_previous_kept_boundary_and_passes_previous_summary() -> None:
    path = chain(user(TEXT_400), assistant(TEXT_400), user(TEXT_400), assistant(TEXT_400))
    first = prepare_compaction(path, keep_recent_tokens=150, tokens_before=400)
    compaction: EntryDict = {
        "type": "compaction",
        "id": "c0000001",
        "parentId": path[-1]["id"],
        "timestamp": "2026-01-01T00:00:01.000Z",
        "summary": "FIRST SUMMARY",
        "firstKeptEntryId": first.first_kept_entry_id,
        "tokensBefore": 400,
        "details": {"readFiles": ["old.py"], "modifiedFiles": []},
    }
    more = chain(user(TEXT_400), assistant(TEXT_400), user(TEXT_400), assistant(TEXT_400))
    for index, entry in enumerate(more):
        entry["id"] = f"n{index:07d}"
        entry["parentId"] = compaction["id"] if index == 0 else more[index - 1]["id"]
    second = prepare_compaction([*path, compaction, *more], keep_recent_tokens=150, tokens_before=900)
    assert second.previous_summary == "FIRST SUMMARY"
    summarized_texts = [m.get("content") for m in second.messages_to_summarize]
    # Starts at the first compaction's kept boundary (entry 2), not at the compaction itself.
    assert summarized_texts[0] == path[2]["message"]["content"]
    assert second.first_kept_entry_id == more[2]["id"]
    assert second.previous_details == {"readFiles": ["old.py"], "modifiedFiles": []}


def test_file_operations_carry_the_previous_compactions_files_and_a_change_beats_a_read() -> None:
    def call(name: str, path: str) -> BlockDict:
        return {"type": "toolCall", "id": f"{name}-{path}", "name": name, "arguments": {"path": path}}

    path = chain(
        user(TEXT_400),
        assistant("", calls=[call("read", "a.py"), call("read", "old.py"), call("ls", "ignored")]),
        user(TEXT_400),
        assistant("", calls=[call("edit", "a.py"), call("write", "new.py")]),
        user(TEXT_400),
        assistant(TEXT_400),
    )
    prep = prepare_compaction(path, keep_recent_tokens=150, tokens_before=1000)
    assert prep.first_kept_entry_id == path[4]["id"]
    prep.previous_details = {"readFiles": ["kept.py", "new.py"], "modifiedFiles": ["m.py"], "extra": 1}
    assert cumulative_file_operations(prep) == {
        "readFiles": ["kept.py", "old.py"],
        "modifiedFiles": ["a.py", "m.py", "new.py"],
    }
    prep.previous_details = None  # a hook's compaction whose details were not an object
    assert cumulative_file_operations(prep) == {"readFiles": ["old.py"], "modifiedFiles": ["a.py", "new.py"]}


def _compacted_twice(summary: str, details: object, *, from_hook: bool = False) -> CompactionPreparation:
    """A second compaction of a branch whose first compaction (``summary``, ``details``) lies
    after four messages, with four more after it."""
    path = chain(user(TEXT_400), assistant(TEXT_400), user(TEXT_400), assistant(TEXT_400))
    compaction: EntryDict = {
        "type": "compaction",
        "id": "c0000001",
        "parentId": path[-1]["id"],
        "timestamp": "2026-01-01T00:00:01.000Z",
        "summary": summary,
        "firstKeptEntryId": path[2]["id"],
        "tokensBefore": 400,
        "details": details,
        "fromHook": from_hook,
    }
    more = chain(user(TEXT_400), assistant(TEXT_400), user(TEXT_400), assistant(TEXT_400))
    for index, entry in enumerate(more):
        entry["id"] = f"n{index:07d}"
        entry["parentId"] = compaction["id"] if index == 0 else more[index - 1]["id"]
    return prepare_compaction([*path, compaction, *more], keep_recent_tokens=150, tokens_before=900)


def test_files_in_a_hooks_compaction_details_are_not_carried_on_as_pi_does() -> None:
    details = {"readFiles": ["hook.py"], "modifiedFiles": ["hook-made.py"]}
    second = _compacted_twice("THE HOOK'S SUMMARY", details, from_hook=True)
    assert second.previous_summary == "THE HOOK'S SUMMARY"
    assert second.previous_details is None
    assert cumulative_file_operations(second) == {"readFiles": [], "modifiedFiles": []}
    ours = _compacted_twice("OURS", details)
    assert cumulative_file_operations(ours) == {"readFiles": ["hook.py"], "modifiedFiles": ["hook-made.py"]}


def test_previous_file_lists_that_are_not_lists_of_paths_carry_nothing() -> None:
    second = _compacted_twice("S", {"readFiles": "abc", "modifiedFiles": ["ok.py", 7, None]})
    assert cumulative_file_operations(second) == {"readFiles": [], "modifiedFiles": ["ok.py"]}


@pytest.mark.anyio
async def test_a_branch_summary_carries_the_files_of_summaries_made_on_the_branch_before() -> None:
    def summary(entry_id: str, parent: str, details: object, from_hook: bool) -> EntryDict:
        return {
            "type": "branch_summary",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "fromId": "elsewhere",
            "summary": "an earlier branch",
            "details": details,
            "fromHook": from_hook,
        }

    read: BlockDict = {"type": "toolCall", "id": "r", "name": "read", "arguments": {"path": "here.py"}}
    empty: BlockDict = {"type": "toolCall", "id": "e", "name": "edit", "arguments": {"path": ""}}
    entries = chain(user(TEXT_400), assistant("", calls=[read, empty]))
    entries.append(
        summary("s1", entries[-1]["id"], {"readFiles": ["a.py"], "modifiedFiles": ["b.py"]}, False)
    )
    entries.append(summary("s2", "s1", {"readFiles": ["hook.py"], "modifiedFiles": []}, True))
    provider = FauxProvider([{"text": "what the branch did"}])
    model = provider.models()[0]
    text, details = await generate_branch_summary(
        provider, model, entries, custom_instructions=None, replace_instructions=False
    )
    assert text.endswith("what the branch did")
    assert details == {"readFiles": ["a.py", "here.py"], "modifiedFiles": ["b.py"]}


# --- through AgentSession (in process, faux provider) ------------------------------------------


def make_agent(
    tmp_path: Path, script: list[FauxReply], *, keep: int = 100, reserve: int = 16_384
) -> tuple[AgentSession, Recorder, FauxProvider]:
    manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    provider = FauxProvider(script)
    recorder = Recorder()
    settings = AgentSettings(
        compaction=CompactionSettings(enabled=True, reserve_tokens=reserve, keep_recent_tokens=keep)
    )
    agent = AgentSession(manager=manager, provider=provider, emit=recorder, settings=settings)
    return agent, recorder, provider


@pytest.mark.anyio
async def test_manual_compact_appends_entry_and_context_starts_with_summary(tmp_path: Path) -> None:
    agent, events, _ = make_agent(tmp_path, [{"text": TEXT_400} for _ in range(4)])
    for turn in range(4):
        await agent.prompt(f"request {turn} " + TEXT_400)
    result = await agent.compact("focus on requests")
    context = agent.messages()
    assert context[0]["role"] == "compactionSummary"
    assert "## Goal" in context[0]["summary"]
    assert result.firstKeptEntryId in {e["id"] for e in agent.manager.entries}
    assert result.tokensBefore > 0
    assert [e["reason"] for e in events.of("compaction_start")] == ["manual"]
    end = events.of("compaction_end")[0]
    assert end["result"]["firstKeptEntryId"] == result.firstKeptEntryId
    assert end["aborted"] is False
    await agent.shutdown()


def answers(count: int) -> list[FauxReply]:
    """``count`` scripted answers of 400 characters."""
    return [{"text": TEXT_400} for _ in range(count)]


@pytest.mark.anyio
async def test_failed_summary_appends_nothing(tmp_path: Path) -> None:
    script: list[FauxReply] = [*answers(4), {"error": "summary model down"}]
    agent, events, _ = make_agent(tmp_path, script)
    for turn in range(4):
        await agent.prompt(f"request {turn} " + TEXT_400)
    before = list(agent.manager.entries)
    with pytest.raises(ProviderError):
        await agent.compact(None)
    assert agent.manager.entries == before
    assert events.of("compaction_end")[0]["errorMessage"]
    await agent.shutdown()


@pytest.mark.anyio
async def test_abort_during_compaction_appends_nothing(tmp_path: Path) -> None:
    script: list[FauxReply] = [*answers(4), {"text": "slow summary " * 50, "delayMs": 50}]
    agent, events, _ = make_agent(tmp_path, script)
    for turn in range(4):
        await agent.prompt(f"request {turn} " + TEXT_400)
    before = list(agent.manager.entries)

    async def abort_soon() -> None:
        await events.until(lambda e: e["type"] == "compaction_start")
        await anyio.sleep(0.05)  # let the summary stream start
        agent.abort()

    async with anyio.create_task_group() as group:
        group.start_soon(abort_soon)
        with pytest.raises(OperationCancelledError):
            await agent.compact(None)
    assert agent.manager.entries == before
    assert events.of("compaction_end")[0]["aborted"] is True
    await agent.shutdown()


@pytest.mark.anyio
async def test_threshold_compaction_runs_after_a_run_that_fills_the_window(tmp_path: Path) -> None:
    # faux-1 has a 200k window; a reply reporting 190k input tokens crosses 200k - 16k.
    script: list[FauxReply] = [*answers(3), {"text": "big", "usage": {"input": 190_000, "output": 10}}]
    agent, events, _ = make_agent(tmp_path, script)
    for turn in range(4):
        await agent.prompt(f"request {turn} " + TEXT_400)
    assert [e["reason"] for e in events.of("compaction_start")] == ["threshold"]
    assert any(e.get("type") == "compaction" for e in agent.manager.entries)
    await agent.shutdown()


@pytest.mark.anyio
async def test_overflow_error_compacts_then_retries_the_prompt_once(tmp_path: Path) -> None:
    script: list[FauxReply] = [
        *answers(3),
        {"error": "prompt is too long: 210000 tokens > 200000 maximum", "overflow": True, "status": 400},
        {"text": "## Goal\nsummary written during the overflow compaction"},
        {"text": "answer after compaction"},
    ]
    agent, events, _ = make_agent(tmp_path, script)
    for turn in range(3):
        await agent.prompt(f"request {turn} " + TEXT_400)
    result = await agent.prompt("the request that overflows " + TEXT_400)
    assert result.stopReason == "stop"
    assert agent.last_assistant_text() == "answer after compaction"
    end = events.of("compaction_end")[0]
    assert end["reason"] == "overflow"
    assert end["willRetry"] is True
    assert agent.messages()[0]["summary"].startswith("## Goal\nsummary written during the overflow")
    await agent.shutdown()


@pytest.mark.anyio
async def test_each_branch_keeps_its_own_compaction_history(tmp_path: Path) -> None:
    agent, _, _ = make_agent(tmp_path, [{"text": TEXT_400} for _ in range(8)])
    for turn in range(3):
        await agent.prompt(f"request {turn} " + TEXT_400)
    fork_point = agent.manager.leaf_id
    assert fork_point is not None
    await agent.prompt("branch A " + TEXT_400)
    await agent.compact(None)
    branch_a_leaf = agent.manager.leaf_id
    await agent.manager.branch(fork_point)
    await agent.prompt("branch B " + TEXT_400)
    context_b = agent.messages()
    assert all(m["role"] != "compactionSummary" for m in context_b)
    await agent.compact(None)
    assert sum(1 for m in agent.messages() if m["role"] == "compactionSummary") == 1
    await agent.manager.branch(branch_a_leaf)  # type: ignore[arg-type]
    context_a = agent.messages()
    assert context_a[0]["role"] == "compactionSummary"
    assert not any("branch B" in str(m.get("content")) for m in context_a)
    await agent.shutdown()


@pytest.mark.anyio
async def test_long_session_with_auto_compaction_keeps_context_bounded(tmp_path: Path) -> None:
    from bench.long_session import run_long_session

    # Tokens fill the window, not turns: 70 replies of 4,000 characters compact twice (the
    # second time near turn 45), as 150 of 1,600 do, in half as many turns.
    result = await run_long_session(70, 4000, tmp_path)
    assert result.compactions >= 2
    assert result.max_context_tokens < result.context_window
