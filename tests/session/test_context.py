"""build_session_context: what the model sees for a leaf, as pi builds it."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import msgspec
import orjson
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

from rpc_agent.protocol.entries import parse_message
from rpc_agent.protocol.shapes import EntryDict, MessageDict
from rpc_agent.store import ModelRef, SessionManager, build_session_context
from rpc_agent.store.context import SessionContext, StoredContext, build_stored_context

# Seed 000, "Example: Full Session with Branching", in v3 form: 8-hex ids, a null root parent
# (the header is not a tree node in v3), ISO timestamps, full assistant messages, fromId.
M1, M2, M3, M4, M5, M6, BS1, M7, M8 = (
    "000000a1",
    "000000a2",
    "000000a3",
    "000000a4",
    "000000a5",
    "000000a6",
    "000000b1",
    "000000a7",
    "000000a8",
)
SEED_000 = [
    header(cwd="/project"),
    message_entry(M1, None, 1, user("Build a CLI")),
    message_entry(M2, M1, 2, assistant("I'll create...")),
    message_entry(M3, M2, 3, user("Add --verbose flag")),
    message_entry(M4, M3, 4, assistant("Here's the flag...")),
    message_entry(M5, M4, 5, user("Actually use Python")),
    message_entry(M6, M5, 6, assistant("Converting to Python...")),
    entry("branch_summary", BS1, M2, 7, fromId=M6, summary="Attempted Node.js CLI with --verbose flag"),
    message_entry(M7, BS1, 8, user("Use Rust instead")),
    message_entry(M8, M7, 9, assistant("Creating Rust CLI...")),
]
SEED_000_MESSAGES = [
    ("user", "Build a CLI"),
    ("assistant", "I'll create..."),
    ("branchSummary", "Attempted Node.js CLI with --verbose flag"),
    ("user", "Use Rust instead"),
    ("assistant", "Creating Rust CLI..."),
]


def test_seed_000_full_session_with_branching_gives_exactly_its_five_messages(tmp_path: Path) -> None:
    path = tmp_path / "seed000.jsonl"
    write_jsonl(path, SEED_000)
    with SessionManager.open(path) as manager:
        assert manager.leaf_id == M8
        context = manager.build_session_context()
    assert summarize(context.messages) == SEED_000_MESSAGES
    assert context.messages[2] == {
        "role": "branchSummary",
        "summary": "Attempted Node.js CLI with --verbose flag",
        "fromId": M6,
        "timestamp": ms(iso(7)),
    }
    assert context.messages[0] == user("Build a CLI")
    for message in context.messages:
        parse_message(message)  # every message is a valid AgentMessage


def test_seed_000_abandoned_branch_is_still_reachable_from_its_own_leaf() -> None:
    entries = cast("list[EntryDict]", SEED_000[1:])
    context = build_session_context(entries, M6)
    assert [text for _, text in summarize(context.messages)] == [
        "Build a CLI",
        "I'll create...",
        "Add --verbose flag",
        "Here's the flag...",
        "Actually use Python",
        "Converting to Python...",
    ]


def summary_at(entries: list[EntryDict], leaf: str | None) -> list[tuple[str, str]]:
    """(role, text) of the context built for ``leaf``."""
    return summarize(build_session_context(entries, leaf).messages)


def test_compaction_emits_summary_then_kept_entries_then_the_rest() -> None:
    entries = [
        *chain(user("u1"), assistant("a1"), user("u2"), assistant("a2")),
        compaction_entry("000000c1", "00000004", 5, "Earlier: u1/a1", "00000003", 50000),
        message_entry("00000005", "000000c1", 6, user("u3")),
        message_entry("00000006", "00000005", 7, assistant("a3")),
    ]
    context = build_session_context(entries, "00000006")
    assert summarize(context.messages) == [
        ("compactionSummary", "Earlier: u1/a1"),
        ("user", "u2"),
        ("assistant", "a2"),
        ("user", "u3"),
        ("assistant", "a3"),
    ]
    assert context.messages[0] == {
        "role": "compactionSummary",
        "summary": "Earlier: u1/a1",
        "tokensBefore": 50000,
        "timestamp": ms(iso(5)),
    }


def test_compaction_whose_first_kept_entry_is_off_the_path_keeps_only_what_follows() -> None:
    entries = [
        message_entry("00000001", None, 1, user("u1")),
        message_entry("00000002", "00000001", 2, assistant("a1")),
        message_entry("0000000f", "00000001", 3, assistant("other branch")),
        compaction_entry("000000c1", "00000002", 4, "S", "0000000f", 1),
        message_entry("00000003", "000000c1", 5, user("u2")),
    ]
    assert summary_at(entries, "00000003") == [("compactionSummary", "S"), ("user", "u2")]

    entries[3]["firstKeptEntryId"] = "deadbeef"  # an id that does not exist at all
    assert summary_at(entries, "00000003") == [("compactionSummary", "S"), ("user", "u2")]


def test_last_compaction_on_the_path_wins() -> None:
    entries = [
        message_entry("00000001", None, 1, user("u1")),
        compaction_entry("000000c1", "00000001", 2, "S1", "00000001", 1),
        message_entry("00000002", "000000c1", 3, user("u2")),
        message_entry("00000003", "00000002", 4, assistant("a2")),
        compaction_entry("000000c2", "00000003", 5, "S2", "00000002", 2),
        message_entry("00000004", "000000c2", 6, user("u3")),
    ]
    assert summary_at(entries, "00000004") == [
        ("compactionSummary", "S2"),
        ("user", "u2"),
        ("assistant", "a2"),
        ("user", "u3"),
    ]


def test_kept_range_of_a_compaction_converts_custom_messages_and_branch_summaries() -> None:
    entries = [
        message_entry("00000001", None, 1, user("u1")),
        entry(
            "custom_message", "00000002", "00000001", 2, customType="ext", content="injected", display=True
        ),
        entry("branch_summary", "00000003", "00000002", 3, fromId="00000009", summary="left behind"),
        compaction_entry("000000c1", "00000003", 4, "S", "00000002", 1),
    ]
    assert summary_at(entries, "000000c1") == [
        ("compactionSummary", "S"),
        ("custom", "injected"),
        ("branchSummary", "left behind"),
    ]


THINKING_CHANGES = [
    message_entry("00000001", None, 1, user("u1")),
    entry("thinking_level_change", "00000002", "00000001", 2, thinkingLevel="high"),
    entry("thinking_level_change", "00000003", "00000002", 3, thinkingLevel="low"),
    entry("thinking_level_change", "00000004", "00000001", 4, thinkingLevel="xhigh"),
]


@pytest.mark.parametrize(
    ("leaf", "level"),
    [("00000001", "off"), ("00000002", "high"), ("00000003", "low"), ("00000004", "xhigh")],
)
def test_thinking_level_defaults_to_off_and_follows_the_path_only(leaf: str, level: str) -> None:
    assert build_session_context(THINKING_CHANGES, leaf).thinkingLevel == level


MODEL_CHANGES = [
    message_entry("00000001", None, 1, user("u1")),
    entry("model_change", "00000002", "00000001", 2, provider="openai", modelId="gpt-4o"),
    message_entry("00000003", "00000002", 3, assistant("a", provider="anthropic", model="claude-x")),
    entry("model_change", "00000004", "00000003", 4, provider="google", modelId="gemini-2"),
]


@pytest.mark.parametrize(
    ("leaf", "model"),
    [
        ("00000001", None),
        ("00000002", ModelRef("openai", "gpt-4o")),
        ("00000003", ModelRef("anthropic", "claude-x")),
        ("00000004", ModelRef("google", "gemini-2")),
    ],
    ids=["none-yet", "model-change", "assistant-message", "later-model-change"],
)
def test_model_comes_from_model_changes_and_assistant_messages_last_wins(
    leaf: str, model: ModelRef | None
) -> None:
    assert build_session_context(MODEL_CHANGES, leaf).model == model


def test_model_change_in_the_fork_dialect_is_understood() -> None:
    entries = [
        message_entry("00000001", None, 1, user("u1")),
        entry("model_change", "00000002", "00000001", 2, model="openai/gpt-4o"),
        entry("model_change", "00000003", "00000002", 3, model="anthropic/claude-x", role="default"),
        entry("model_change", "00000004", "00000003", 4, model="cheap/small", role="smol"),
    ]
    assert build_session_context(entries, "00000002").model == ModelRef("openai", "gpt-4o")
    assert build_session_context(entries, "00000003").model == ModelRef("anthropic", "claude-x")
    # A model for another role does not change the default model.
    assert build_session_context(entries, "00000004").model == ModelRef("anthropic", "claude-x")


def test_bookkeeping_and_unknown_entries_never_reach_the_model() -> None:
    entries = [
        message_entry("00000001", None, 1, user("u1")),
        entry("custom", "00000002", "00000001", 2, customType="ext", data={"secret": "state"}),
        entry("label", "00000003", "00000002", 3, targetId="00000001", label="checkpoint"),
        entry("session_info", "00000004", "00000003", 4, name="My session"),
        entry("ttsr_injection", "00000005", "00000004", 5, injectedRules=["ruleA"]),
        entry("session_init", "00000006", "00000005", 6, systemPrompt="sys", tools=["read"]),
        entry("mode_change", "00000007", "00000006", 7, mode="plan"),
        entry("hologram", "00000008", "00000007", 8, message=user("not a message entry")),
        entry("branch_summary", "00000009", "00000008", 9, fromId="root", summary=""),
        message_entry("0000000a", "00000009", 10, assistant("a1")),
    ]
    assert summary_at(entries, "0000000a") == [("user", "u1"), ("assistant", "a1")]


def test_custom_message_entry_becomes_a_custom_role_message() -> None:
    entries = [
        entry(
            "custom_message",
            "00000001",
            None,
            1,
            customType="my-extension",
            content=[{"type": "text", "text": "Injected"}],
            display=False,
            details={"debug": True},
        ),
    ]
    [message] = build_session_context(entries, "00000001").messages
    assert message == {
        "role": "custom",
        "customType": "my-extension",
        "content": [{"type": "text", "text": "Injected"}],
        "display": False,
        "details": {"debug": True},
        "timestamp": ms(iso(1)),
    }
    parse_message(message)


def test_unknown_leaf_id_falls_back_to_the_last_entry() -> None:
    entries = [
        message_entry("00000001", None, 1, user("u1")),
        message_entry("00000002", "00000001", 2, assistant("a1")),
        message_entry("00000003", "00000001", 3, assistant("a1 again")),
    ]
    assert summary_at(entries, "ffffffff") == [("user", "u1"), ("assistant", "a1 again")]


def test_null_leaf_gives_an_empty_context() -> None:
    entries = [message_entry("00000001", None, 1, user("u1"))]
    context = build_session_context(entries, None)
    assert context.messages == []
    assert context.thinkingLevel == "off"
    assert context.model is None


def test_missing_parent_ends_the_walk_so_an_orphan_yields_its_own_chain() -> None:
    entries = [
        message_entry("00000001", None, 1, user("u1")),
        message_entry("00000002", "00000001", 2, assistant("a1")),
        message_entry("00000003", "0badc0de", 3, user("orphan")),
        message_entry("00000004", "00000003", 4, assistant("orphan reply")),
    ]
    assert summary_at(entries, "00000004") == [("user", "orphan"), ("assistant", "orphan reply")]


def test_a_parent_cycle_ends_the_walk_instead_of_looping() -> None:
    entries = [
        message_entry("00000001", "00000002", 1, user("u1")),
        message_entry("00000002", "00000001", 2, assistant("a1")),
    ]
    assert summary_at(entries, "00000002") == [("user", "u1"), ("assistant", "a1")]


def test_manager_context_follows_its_leaf_through_branching() -> None:
    manager = SessionManager.in_memory("/p")
    u1 = manager.append_message(user("u1")).id
    a1 = manager.append_message(assistant("a1")).id
    manager.append_message(user("u2"))
    manager.append_message(assistant("a2"))
    assert a1 is not None
    assert u1 is not None
    manager.branch(a1)
    assert [t for _, t in summarize(manager.build_session_context().messages)] == ["u1", "a1"]
    manager.append_message(user("u3"))
    assert [t for _, t in summarize(manager.build_session_context().messages)] == ["u1", "a1", "u3"]
    manager.reset_leaf()
    assert manager.build_session_context().messages == []
    manager.branch_with_summary(u1, "summary of the rest")
    assert summarize(manager.build_session_context().messages) == [
        ("user", "u1"),
        ("branchSummary", "summary of the rest"),
    ]


# --- the context as a JSON reader gets it ---------------------------------------------------


def test_a_readers_context_keeps_stored_json_as_it_is_and_agrees_with_the_parsed_one() -> None:
    entries = [
        *chain(user("u1"), assistant("a1"), user("u2")),
        entry("thinking_level_change", "00000004", "00000003", 4, thinkingLevel="high"),
    ]
    by_id = {e["id"]: e for e in entries}
    stored = msgspec.Raw(orjson.dumps(entries[1]["message"]))

    def message_of(item: EntryDict) -> MessageDict | msgspec.Raw | None:
        return stored if item["id"] == "00000002" else item.get("message")

    reader = build_stored_context(entries, "00000004", by_id, load=lambda e: e, message_of=message_of)
    parsed = build_session_context(entries, "00000004")
    assert isinstance(reader, StoredContext)
    assert isinstance(parsed, SessionContext)
    assert reader.messages[1] is stored  # never parsed
    assert [
        msgspec.json.decode(m) if isinstance(m, msgspec.Raw) else m for m in reader.messages
    ] == parsed.messages
    assert (
        (reader.model, reader.thinkingLevel, reader.thinkingLevelRecorded)
        == (
            parsed.model,
            parsed.thinkingLevel,
            parsed.thinkingLevelRecorded,
        )
        == (ModelRef("anthropic", "claude-sonnet-4-5"), "high", True)
    )


def test_a_readers_context_leaves_out_what_message_of_declines() -> None:
    entries = chain(user("u1"), assistant("a1"), user("u2"))
    by_id = {e["id"]: e for e in entries}
    reader = build_stored_context(
        entries,
        "00000003",
        by_id,
        load=lambda e: e,
        message_of=lambda item: None if item["id"] == "00000002" else item.get("message"),
    )
    assert summarize([m for m in reader.messages if not isinstance(m, msgspec.Raw)]) == [
        ("user", "u1"),
        ("user", "u2"),
    ]


def test_a_lazily_opened_session_sends_its_stored_lines_and_equals_the_parsed_context(tmp_path: Path) -> None:
    path = tmp_path / "lazy.jsonl"
    write_session(path, *chain(user("u1"), assistant("a1"), {**user("u2"), "content": None}))
    with SessionManager.open(path) as manager:
        sent = orjson.loads(manager.messages_json())
        parsed = manager.build_session_context().messages
    assert sent == parsed
    assert parsed[2]["content"] == []  # pi's normalisation of a null content, in both
