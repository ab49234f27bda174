"""pi 1.5.2's context rules on hand-built files: context edits, system messages, null content.

Each case is checked three ways, which must agree: ``build_session_context`` on the entry
dicts, a store opened on the file (message lines kept as stored bytes until read), and that
store's JSON reader (``messages_json``, what ``get_messages`` sends).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from session_testlib import (
    assistant,
    chain,
    compaction_entry,
    entry,
    header,
    iso,
    message_entry,
    ms,
    summarize,
    user,
    write_jsonl,
    write_session,
)

from pi15_lines import pi15_session
from pi_lines import tool_result
from rpc_agent.protocol.entries import parse_entry, parse_message
from rpc_agent.protocol.shapes import EntryDict, MessageDict
from rpc_agent.store import SessionManager, build_session_context

JsonDict = dict[str, Any]


def system(content: Any = "", *, at: int = 0, **fields: Any) -> JsonDict:
    message: JsonDict = {"role": "system", "content": content}
    message.update(fields)
    message["timestamp"] = at
    return message


def tool_call(call_id: str) -> MessageDict:
    message = assistant("")
    message["content"] = [{"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "a"}}]
    message["stopReason"] = "toolUse"
    return message


def edit(entry_id: str, parent: str, at: float, target: str, replacement: Any) -> EntryDict:
    return entry("context_edit", entry_id, parent, at, targetId=target, replacement=replacement)


def contexts(
    tmp_path: Path, lines: Sequence[Mapping[str, Any]], leaf: str | None = None
) -> list[MessageDict]:
    """The context's messages, after checking that the three ways of building it agree."""
    entries = cast("Sequence[EntryDict]", lines[1:])  # hand-written lines, odd ones included
    direct = build_session_context(entries, leaf, leaf_is_explicit=leaf is not None).messages
    path = tmp_path / "session.jsonl"
    write_jsonl(path, lines)
    with SessionManager.open(path) as manager:
        if leaf is not None:
            manager.branch(leaf)
        as_json = json.loads(manager.messages_json())
    with SessionManager.open(path) as manager:
        if leaf is not None:
            manager.branch(leaf)
        stored = manager.build_session_context().messages
    assert as_json == direct
    assert stored == direct
    for message in direct:
        parse_message(message)
    return direct


# --- context_edit -------------------------------------------------------------------------


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
    assert summarize(contexts(tmp_path, lines)) == [
        ("user", "u"),
        ("custom", "new note"),
        ("branchSummary", "S"),
    ]
    lines.append(edit("00000006", "00000005", 6, "00000003", None))
    assert summarize(contexts(tmp_path, lines)) == [("user", "u"), ("custom", "new note")]


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


# --- system messages ----------------------------------------------------------------------


def test_system_messages_without_a_compaction_stay_in_place(tmp_path: Path) -> None:
    first = system(
        sections={"preamble": "You are pi."},
        toolsAdded=[{"name": "read", "description": "r", "parameters": {}}],
    )
    later = system(sections={"skills": None}, toolsRemoved=[{"name": "read"}])
    lines = [
        header(),
        *chain(first, user("u1"), later, assistant("a1")),
    ]
    messages = contexts(tmp_path, lines)
    assert [m["role"] for m in messages] == ["system", "user", "system", "assistant"]
    assert messages[0] == first
    assert messages[2] == later


def test_a_compaction_starts_with_its_system_message_and_drops_those_it_keeps(tmp_path: Path) -> None:
    checkpoint = system("Base prompt.", at=ms(iso(9)), sections={"preamble": "You are pi."})
    lines = [
        header(),
        *chain(
            system(sections={"preamble": "You are pi."}),
            user("u1"),
            assistant("a1"),
            user("u2"),
            system(sections={"cwd": "/elsewhere"}),
            assistant("a2"),
        ),
        {
            **compaction_entry("000000c1", "00000006", 9, "S", "00000004", 100),
            "systemMessage": checkpoint,
            "usage": {"input": 900, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 950},
        },
        message_entry("00000007", "000000c1", 10, user("u3")),
        message_entry("00000008", "00000007", 11, system(sections={"cwd": "/third"})),
        message_entry("00000009", "00000008", 12, assistant("a3")),
    ]
    messages = contexts(tmp_path, lines)
    assert [m["role"] for m in messages] == [
        "system",
        "compactionSummary",
        "user",
        "assistant",
        "user",
        "system",  # after the compaction: kept
        "assistant",
    ]
    assert messages[0] == checkpoint
    assert summarize(messages)[2:5] == [("user", "u2"), ("assistant", "a2"), ("user", "u3")]


def test_a_compaction_without_a_system_message_reads_as_before(tmp_path: Path) -> None:
    lines = [
        header(),
        *chain(system(sections={"preamble": "p"}), user("u1")),
        compaction_entry("000000c1", "00000002", 3, "S", "00000001", 10),
        message_entry("00000003", "000000c1", 4, user("u2")),
    ]
    assert summarize(contexts(tmp_path, lines)) == [
        ("compactionSummary", "S"),
        ("user", "u1"),
        ("user", "u2"),
    ]


def test_retain_none_compaction_keeps_nothing_before_it(tmp_path: Path) -> None:
    lines = [
        header(),
        *chain(user("u1"), assistant("a1")),
        compaction_entry("000000c1", "00000002", 3, "All of it", "000000c1", 10),
        message_entry("00000003", "000000c1", 4, user("u2")),
    ]
    assert summarize(contexts(tmp_path, lines)) == [("compactionSummary", "All of it"), ("user", "u2")]


def test_an_older_compaction_in_the_kept_range_gives_nothing(tmp_path: Path) -> None:
    lines = [
        header(),
        message_entry("00000001", None, 1, user("u1")),
        {
            **compaction_entry("000000c1", "00000001", 2, "old", "00000001", 10),
            "systemMessage": system("old"),
        },
        message_entry("00000002", "000000c1", 3, user("u2")),
        {
            **compaction_entry("000000c2", "00000002", 4, "new", "000000c1", 20),
            "systemMessage": system("new"),
        },
    ]
    messages = contexts(tmp_path, lines)
    assert summarize(messages) == [("system", "new"), ("compactionSummary", "new"), ("user", "u2")]


def test_an_edit_that_omits_the_compaction_drops_its_checkpoint_and_summary(tmp_path: Path) -> None:
    lines = [
        header(),
        message_entry("00000001", None, 1, user("u1")),
        {**compaction_entry("000000c1", "00000001", 2, "S", "00000001", 10), "systemMessage": system("p")},
        edit("00000002", "000000c1", 3, "000000c1", {"content": "kept: neither is editable content"}),
    ]
    assert summarize(contexts(tmp_path, lines)) == [
        ("system", "p"),
        ("compactionSummary", "S"),
        ("user", "u1"),
    ]
    lines.append(edit("00000003", "00000002", 4, "000000c1", None))
    assert summarize(contexts(tmp_path, lines)) == [("user", "u1")]


# --- content: null ------------------------------------------------------------------------


def test_null_or_missing_content_is_normalised_as_pi_does(tmp_path: Path) -> None:
    no_content = assistant("")
    del no_content["content"]
    lines = [
        header(),
        *chain(
            system(None),
            {**user("x"), "content": None},
            no_content,
            {**tool_result("c", "x"), "content": None},
        ),
        entry("custom_message", "00000005", "00000004", 5, customType="n", content=None, display=False),
        message_entry("00000006", "00000005", 6, user("fine")),
    ]
    messages = contexts(tmp_path, lines)
    assert [m.get("content") for m in messages] == ["", [], [], [], [], "fine"]
    assert messages[2]["model"] == "claude-sonnet-4-5"


def test_a_nested_null_content_does_not_change_the_message(tmp_path: Path) -> None:
    call = tool_call("c1")
    blocks = call["content"]
    assert isinstance(blocks, list)
    blocks[0]["arguments"] = {"path": "a", "content": None}
    lines = [
        header(),
        *chain(user("u"), call),
    ]
    assert contexts(tmp_path, lines)[1] == call


# --- entries round-trip -------------------------------------------------------------------


PI15_ENTRIES = [
    {
        **entry("usage", "00000009", None, 1),
        "kind": "cache_warm",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 50000,
            "cacheWrite": 0,
            "cacheWrite1h": 0,
            "reasoning": 0,
            "totalTokens": 50000,
            "cost": {
                "input": 0,
                "output": 0,
                "cacheRead": 0.015,
                "cacheWrite": 0,
                "total": 0.015,
                "totalFromProvider": True,
            },
        },
        "note": "idle warm",
    },
    edit(
        "0000000a",
        "00000009",
        2,
        "00000009",
        {"content": [{"type": "toolCall", "id": "t", "name": "n", "arguments": {}}]},
    ),
    {
        **compaction_entry("0000000b", "0000000a", 3, "S", "0000000b", 1),
        "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3},
        "systemMessage": system(
            [{"type": "text", "text": "p"}],
            toolsAdded=[
                {
                    "name": "bash",
                    "description": "b",
                    "parameters": {"type": "object"},
                    "constrainedSampling": False,
                }
            ],
        ),
    },
]


@pytest.mark.parametrize("line", PI15_ENTRIES, ids=lambda line: str(line["type"]))
def test_pi15_entries_validate_and_dump_back_unchanged(line: JsonDict) -> None:
    typed = parse_entry(line)
    assert not isinstance(typed, dict), "a pi 1.5.2 entry type is known"
    assert typed.model_dump(mode="json", exclude_unset=True) == line


def test_pi15_entries_survive_a_reopen_and_an_append_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "pi15.jsonl"
    lines = [header(session_id="019a7c52-5e1c-7d3e-9c1a-2b3c4d5e6f70"), *PI15_ENTRIES]
    before = write_jsonl(path, lines)
    with SessionManager.open(path) as manager:
        manager.append_message(user("more"))
    after = path.read_bytes()
    assert after.startswith(before)
    assert json.loads(after[len(before) :])["parentId"] == "0000000b"


def test_our_compaction_saves_the_replayed_system_messages_as_pi_does(tmp_path: Path) -> None:
    path = tmp_path / "ours.jsonl"
    first = system(
        "Base.",
        sections={"preamble": "p", "skills": "s"},
        toolsAdded=[
            {"name": "read", "description": "r", "parameters": {}},
            {"name": "bash", "description": "b", "parameters": {}},
        ],
    )
    later = system(
        sections={"skills": None, "cwd": "/x"},
        toolsRemoved=[{"name": "read"}],
        toolsAdded=[{"name": "bash", "description": "b2", "parameters": {}}],
    )
    write_session(
        path,
        *chain(first, user("u1"), later, assistant("a1")),
    )
    with SessionManager.open(path) as manager:
        compaction_id = manager.append_compaction("S", "00000002", 100).id or ""
        saved = manager.get_entry(compaction_id)
        assert saved is not None
        assert saved["systemMessage"] == {
            "role": "system",
            "content": "Base.",
            "sections": {"preamble": "p", "cwd": "/x"},
            "toolsAdded": [{"name": "bash", "description": "b2", "parameters": {}}],
            "timestamp": ms(saved["timestamp"]),
        }
        messages = manager.build_session_context().messages
    assert [m["role"] for m in messages] == ["system", "compactionSummary", "user", "assistant"]


def test_our_compaction_without_system_messages_saves_none(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    write_session(
        path,
        *chain(user("u"), assistant("a")),
    )
    with SessionManager.open(path) as manager:
        saved = manager.get_entry(manager.append_compaction("S", "00000002", 1).id or "")
    assert saved is not None
    assert "systemMessage" not in saved


def test_new_sessions_get_uuidv7_ids_as_pi_1_5_writes_them(tmp_path: Path) -> None:
    before = time.time_ns() // 1_000_000
    with SessionManager.create(str(tmp_path), tmp_path / "sessions") as manager:
        session_id = manager.session_id
    after = time.time_ns() // 1_000_000
    parsed = uuid.UUID(session_id)
    assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)
    assert before <= parsed.int >> 80 <= after  # the creation time in milliseconds leads the id


def test_the_tree_previews_pi15_entries(tmp_path: Path) -> None:
    path = tmp_path / "pi15.jsonl"
    write_jsonl(path, pi15_session("/p"))
    with SessionManager.open(path) as manager:
        rows = {row["id"]: (row["role"], row["preview"]) for row in json.loads(manager.tree_json())}
    assert rows["00000001"] == ("system", "sections preamble, cwd; tools +read +bash")
    assert rows["0000000a"] == ("system", "sections cwd; tools -bash")
    assert rows["00000006"] == (None, "omit 00000005")
    assert rows["00000007"] == (None, "edit 00000004")
    assert rows["00000009"] == (None, "cache_warm: 300 tokens")
