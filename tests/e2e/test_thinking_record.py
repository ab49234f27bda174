"""The live thinking level stays recorded on the branch, so that a reopen (ours or pi's) shows
it: a new session starts with its model and level, and a navigation to a branch that
implies another level records the live one there (pi 1.5.1's fix, #11451)."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.conftest import E2E, JsonDict
from e2e.test_tree import entries_now, prompt_ids
from pi15_lines import pi15_session
from pi_lines import write_jsonl

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


def levels(entries: list[JsonDict]) -> list[str]:
    return [e["thinkingLevel"] for e in entries if e["type"] == "thinking_level_change"]


async def test_navigating_back_past_a_level_change_records_the_live_level(e2e: E2E) -> None:
    async with e2e.server() as client:
        _, a1 = await prompt_ids(client, "first")
        await client.set_thinking_level("high")
        await prompt_ids(client, "second")
        session_file = Path((await client.get_state()).sessionFile or "")
        nav = await client.navigate_tree(a1)  # the branch at a1 records "off"
        assert (await client.get_state()).thinkingLevel == "high"
        entries, leaf = await entries_now(client)
        assert levels(entries) == ["off", "high", "high"]
        recorded = next(e for e in entries if e["id"] == leaf)
        assert (recorded["type"], recorded["parentId"], nav.leafId) == ("thinking_level_change", a1, leaf)
        assert [m["role"] for m in (await client.call("get_messages"))["messages"]] == ["user", "assistant"]
        # The next prompt finds the level recorded: nothing more is written for it.
        await prompt_ids(client, "third")
        assert levels((await entries_now(client))[0]) == ["off", "high", "high"]
    async with e2e.server("--session", str(session_file)) as client:
        assert (await client.get_state()).thinkingLevel == "high"


async def test_navigating_where_the_level_is_the_live_one_records_nothing(e2e: E2E) -> None:
    async with e2e.server() as client:
        _, a1 = await prompt_ids(client, "first")
        await prompt_ids(client, "second")
        nav = await client.navigate_tree(a1)
        assert nav.leafId == a1
        assert levels((await entries_now(client))[0]) == ["off"]


async def test_a_navigation_with_a_summary_records_the_live_level_after_it(e2e: E2E) -> None:
    async with e2e.server() as client:
        _, a1 = await prompt_ids(client, "first")
        await client.set_thinking_level("max")
        await prompt_ids(client, "second")
        nav = await client.navigate_tree(a1, summarize=True)
        entries, leaf = await entries_now(client)
        recorded = next(e for e in entries if e["id"] == leaf)
        assert (recorded["type"], recorded["thinkingLevel"]) == ("thinking_level_change", "max")
        assert recorded["parentId"] == nav.summaryEntryId
        roles = [m["role"] for m in (await client.call("get_messages"))["messages"]]
        assert roles == ["user", "assistant", "branchSummary"]


async def test_a_file_without_a_recorded_level_gets_the_live_one_with_the_first_prompt(e2e: E2E) -> None:
    # pi 0.73.1's files (and ours before) record no level; opening changes nothing, the first
    # prompt records the live level before its message, where pi 1.5 would have on opening.
    lines = [line for line in pi15_session(str(e2e.cwd)) if line.get("type") != "thinking_level_change"]
    path = e2e.root / "no-level.jsonl"
    before = write_jsonl(path, lines)
    async with e2e.server("--session", str(path), "--thinking", "low") as client:
        await client.get_state()
        assert path.read_bytes() == before
        u, _ = await prompt_ids(client, "go on")
        entries, _ = await entries_now(client)
        added = entries[len(lines) - 1 :]
        assert [e["type"] for e in added] == ["thinking_level_change", "message", "message"]
        assert added[0]["thinkingLevel"] == "low"
        assert added[1]["id"] == u


async def test_thinking_level_max_from_the_command_line_and_from_settings(e2e: E2E) -> None:
    async with e2e.server("--thinking", "max") as client:
        assert (await client.get_state()).thinkingLevel == "max"
        await prompt_ids(client, "hello")
        assert levels((await entries_now(client))[0]) == ["max"]
    e2e.home.mkdir(parents=True, exist_ok=True)
    (e2e.home / "settings.json").write_text('{"defaultThinkingLevel": "max"}')
    async with e2e.server() as client:
        assert (await client.get_state()).thinkingLevel == "max"  # a new session: the default
        await client.set_thinking_level("low")
        await prompt_ids(client, "hello")
        path = (await client.get_state()).sessionFile
        await client.new_session()
        assert (await client.get_state()).thinkingLevel == "max"
    async with e2e.server("--session", str(path)) as client:
        assert (await client.get_state()).thinkingLevel == "low"  # what the session records wins
