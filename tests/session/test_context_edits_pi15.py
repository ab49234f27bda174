"""pi 1.5.2's context_edit entries on hand-built files: what an edit omits or replaces, and where.

Each case is checked by ``pi15_testlib.contexts``: the entry dicts, the store on the file and its
JSON reader must agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pi15_testlib import contexts, edit, system, tool_call
from session_testlib import (
    assistant,
    chain,
    compaction_entry,
    entry,
    header,
    message_entry,
    summarize,
    user,
)

from pi_lines import tool_result
from rpc_agent.protocol.shapes import EntryDict


def before_and_after(
    tmp_path: Path, lines: Sequence[Mapping[str, Any]], then: EntryDict
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The context of the lines' leaf, then of one more entry on it: what that edit changed."""
    return summarize(contexts(tmp_path, lines)), summarize(contexts(tmp_path, [*lines, then]))


RETRIES = [
    header(),
    *chain(
        user("question"),
        tool_call("c1"),
        tool_result("c1", "huge output"),
        assistant("failed attempt"),
        assistant("second failed attempt"),
    ),
    edit("0000000e", "00000005", 6, "00000004", None),
    edit("0000000f", "0000000e", 7, "00000005", None),
    edit("00000010", "0000000f", 8, "00000003", {"content": "output trimmed"}),
    edit("00000011", "00000010", 9, "00000001", {"content": [{"type": "text", "text": "edited question"}]}),
    message_entry("00000006", "00000011", 10, assistant("answer")),
]


def test_context_edits_omit_and_replace_earlier_messages(tmp_path: Path) -> None:
    messages = contexts(tmp_path, RETRIES)
    assert summarize(messages) == [
        ("user", "edited question"),
        ("assistant", ""),
        ("toolResult", "output trimmed"),
        ("assistant", "answer"),
    ]
    # A string replacement of a tool result becomes one text block; the role and the other
    # fields of the edited message stay.
    assert messages[2] == {**tool_result("c1", "x"), "content": [{"type": "text", "text": "output trimmed"}]}
    assert messages[0]["timestamp"] == RETRIES[1]["message"]["timestamp"]


def test_a_branch_without_the_edit_sees_the_original(tmp_path: Path) -> None:
    assert summarize(contexts(tmp_path, RETRIES, "00000005")) == [
        ("user", "question"),
        ("assistant", ""),
        ("toolResult", "huge output"),
        ("assistant", "failed attempt"),
        ("assistant", "second failed attempt"),
    ]
    # Part of the way: the first omission applies, the rest not yet.
    assert [text for _, text in summarize(contexts(tmp_path, RETRIES, "0000000e"))][-2:] == [
        "huge output",
        "second failed attempt",
    ]


def test_the_latest_edit_of_an_entry_wins(tmp_path: Path) -> None:
    lines = [
        header(),
        message_entry("00000001", None, 1, user("original")),
        edit("00000002", "00000001", 2, "00000001", {"content": "first edit"}),
        edit("00000003", "00000002", 3, "00000001", {"content": "second edit"}),
        message_entry("00000004", "00000003", 4, assistant("a")),
    ]
    assert summarize(contexts(tmp_path, lines)) == [("user", "second edit"), ("assistant", "a")]


def test_string_replacement_of_an_assistant_message_becomes_a_text_block(tmp_path: Path) -> None:
    lines = [
        header(),
        *chain(user("u"), assistant("long")),
        edit("00000003", "00000002", 3, "00000002", {"content": "short"}),
    ]
    messages = contexts(tmp_path, lines)
    assert messages[1]["content"] == [{"type": "text", "text": "short"}]
    assert messages[1]["model"] == "claude-sonnet-4-5"


def test_custom_messages_and_branch_summaries_under_an_edit(tmp_path: Path) -> None:
    lines = [
        header(),
        message_entry("00000001", None, 1, user("u")),
        entry(
            "custom_message", "00000002", "00000001", 2, customType="note", content="old note", display=True
        ),
        entry("branch_summary", "00000003", "00000002", 3, fromId="00000001", summary="S"),
        edit("00000004", "00000003", 4, "00000002", {"content": "new note"}),
        edit("00000005", "00000004", 5, "00000003", {"content": "ignored: a summary keeps its text"}),
    ]
    assert before_and_after(tmp_path, lines, edit("00000006", "00000005", 6, "00000003", None)) == (
        [("user", "u"), ("custom", "new note"), ("branchSummary", "S")],
        [("user", "u"), ("custom", "new note")],
    )


def test_an_edit_that_omits_the_compaction_drops_its_checkpoint_and_summary(tmp_path: Path) -> None:
    lines = [
        header(),
        message_entry("00000001", None, 1, user("u1")),
        {**compaction_entry("000000c1", "00000001", 2, "S", "00000001", 10), "systemMessage": system("p")},
        edit("00000002", "000000c1", 3, "000000c1", {"content": "kept: neither is editable content"}),
    ]
    assert before_and_after(tmp_path, lines, edit("00000003", "00000002", 4, "000000c1", None)) == (
        [("system", "p"), ("compactionSummary", "S"), ("user", "u1")],
        [("user", "u1")],
    )


def test_an_edit_summarised_away_by_a_compaction_no_longer_applies(tmp_path: Path) -> None:
    lines = [
        header(),
        *chain(user("u1"), assistant("a1")),
        edit("00000003", "00000002", 3, "00000004", None),  # names an entry not written yet
        message_entry("00000004", "00000003", 4, user("u2")),
        message_entry("00000005", "00000004", 5, assistant("a2")),
        edit("00000006", "00000005", 6, "00000005", {"content": "a2, edited in the kept range"}),
        compaction_entry("000000c1", "00000006", 7, "S", "00000004", 100),
    ]
    assert summarize(contexts(tmp_path, lines)) == [
        ("compactionSummary", "S"),
        ("user", "u2"),
        ("assistant", "a2, edited in the kept range"),
    ]
