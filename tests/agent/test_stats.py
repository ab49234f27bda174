"""get_session_stats as pi 1.5.2 counts it, on a pi 1.5-shaped file: every usage the file
holds, and the context's size (reported, estimated, or unknown after a compaction)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pi15_lines import LEAF, TOOLS, pi15_session
from pi_lines import write_jsonl
from rpc_agent.agent.stats import session_stats
from rpc_agent.store import SessionManager

WINDOW = 200_000


def opened(tmp_path: Path, leaf: str | None = None) -> SessionManager:
    path = tmp_path / "pi15.jsonl"
    write_jsonl(path, pi15_session("/project"))
    manager = SessionManager.open(path)
    if leaf is not None:
        manager.branch(leaf)
    return manager


def test_totals_count_usage_entries_tool_results_and_summaries(tmp_path: Path) -> None:
    with opened(tmp_path) as manager:
        stats = session_stats(manager, WINDOW)
    # Assistant messages 100 + 4 x 10, the tool result 200, the usage entry 300, the compaction
    # 250; the old count (assistant messages only) would be 140 tokens and $0.003.
    assert stats.tokens.input == 100 + 4 * 10 + 200 + 300 + 250
    assert stats.tokens.output == 20 + 4 * 5 + 10 + 0 + 40
    assert stats.tokens.total == stats.tokens.input + stats.tokens.output
    assert stats.cost == pytest.approx(0.003 + 0.005 + 0.01 + 0.02)
    assert (stats.userMessages, stats.assistantMessages, stats.toolResults, stats.toolCalls) == (3, 5, 1, 1)
    assert stats.totalMessages == 11  # system messages are messages too


def test_context_usage_is_the_last_answers_report_after_a_compaction(tmp_path: Path) -> None:
    with opened(tmp_path) as manager:
        usage = session_stats(manager, WINDOW).contextUsage
    assert usage is not None
    assert (usage.tokens, usage.contextWindow) == (15, WINDOW)  # the answer's totalTokens
    assert usage.percent == pytest.approx(15 / WINDOW * 100)


def test_context_usage_is_unknown_after_a_compaction_until_an_answer(tmp_path: Path) -> None:
    with opened(tmp_path, "0000000e") as manager:
        usage = session_stats(manager, WINDOW).contextUsage
    assert usage is not None
    assert (usage.tokens, usage.percent) == (None, None)


def test_context_usage_is_estimated_when_an_edit_came_after_the_last_answer(tmp_path: Path) -> None:
    with opened(tmp_path, "00000007") as manager:
        usage = session_stats(manager, WINDOW).contextUsage
    assert usage is not None
    # The edits made the answers' reports stale: chars/4 of every message, the system message
    # with its sections and tool declarations.
    system_chars = len("You are an expert coding assistant.") + len("Current directory: /project")
    system_chars += len(json.dumps(TOOLS, separators=(",", ":")))
    call_chars = len("read") + len(json.dumps({"path": "README.md"}, separators=(",", ":")))
    expected = (
        math.ceil(system_chars / 4)
        + math.ceil(len("Read the README") / 4)
        + math.ceil(call_chars / 4)
        + math.ceil(len("# README") / 4)  # the edited tool result; the failed attempt is omitted
    )
    assert usage.tokens == expected


def test_no_context_usage_without_a_window(tmp_path: Path) -> None:
    with opened(tmp_path, LEAF) as manager:
        assert session_stats(manager, 0).contextUsage is None


def test_a_message_entry_without_a_message_counts_as_a_message_and_nothing_more(tmp_path: Path) -> None:
    """A hand-edited file: the entry still counts among the messages, and adds no role, tool call
    or usage."""
    path = tmp_path / "edited.jsonl"
    lines = pi15_session("/project")
    hollow = {"type": "message", "id": "00000010", "parentId": LEAF, "timestamp": "2026-01-01T00:00:00.000Z"}
    write_jsonl(path, [*lines, hollow])
    with SessionManager.open(path) as manager:
        stats = session_stats(manager, WINDOW)
    with opened(tmp_path) as manager:
        intact = session_stats(manager, WINDOW)
    assert stats.totalMessages == intact.totalMessages + 1 == 12
    assert stats.tokens == intact.tokens
    assert (stats.userMessages, stats.assistantMessages, stats.toolResults, stats.toolCalls) == (3, 5, 1, 1)
