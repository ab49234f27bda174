"""pi 1.5.2's context rules on hand-built files: system messages and compaction checkpoints, null content.

Each case is checked by ``pi15_testlib.contexts``: the entry dicts, the store on the file and its
JSON reader must agree. Context edits are in test_context_edits_pi15.py.
"""

from __future__ import annotations

from pathlib import Path

from pi15_testlib import contexts, system, tool_call
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
)

from pi_lines import tool_result

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
