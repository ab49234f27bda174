"""The on-disk format: header, entry ids, the shape every ``append_*`` writes, file names."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from session_testlib import HEX8, ISO_MS_Z, assistant, eid, read_lines, user

from rpc_agent.protocol.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    parse_entry,
)
from rpc_agent.store import SessionManager
from rpc_agent.store.files import agent_home, encode_cwd

ENTRY_BASE = ["type", "id", "parentId", "timestamp"]


@pytest.mark.anyio
async def test_header_has_documented_fields_uuid_and_ms_timestamp(tmp_path: Path) -> None:
    manager = SessionManager.create("/work/project", tmp_path)
    await manager.append_message(user("hi"))
    await manager.append_message(assistant("hello"))
    assert manager.session_file is not None
    head = read_lines(manager.session_file)[0]
    await manager.aclose()

    assert list(head) == ["type", "version", "id", "timestamp", "cwd"]
    assert head["type"] == "session"
    assert head["version"] == 3
    assert str(uuid.UUID(head["id"])) == head["id"]
    assert head["id"] == manager.session_id
    assert ISO_MS_Z.match(head["timestamp"])
    assert head["cwd"] == "/work/project"


@pytest.mark.anyio
async def test_header_records_parent_session_when_given(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path, parent_session="/old/session.jsonl")
    await manager.append_message(user("hi"))
    await manager.append_message(assistant("hello"))
    assert manager.session_file is not None
    head = read_lines(manager.session_file)[0]
    await manager.aclose()
    assert list(head) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
    assert head["parentSession"] == "/old/session.jsonl"


def test_file_name_is_header_timestamp_with_colons_and_dots_as_dashes_then_uuid(tmp_path: Path) -> None:
    with SessionManager.create("/p", tmp_path) as manager:
        assert manager.session_file is not None
        stamp = manager.header["timestamp"]
        expected = f"{stamp.replace(':', '-').replace('.', '-')}_{manager.session_id}.jsonl"
        assert manager.session_file.name == expected
        assert manager.session_file.parent == tmp_path
        assert ":" not in manager.session_file.name


def test_default_folder_is_under_rpc_agent_home_sessions_with_encoded_cwd(agent_home: Path) -> None:
    with SessionManager.create("/home/alice/my project") as manager:
        assert manager.session_file is not None
        assert manager.session_file.parent == agent_home / "sessions" / "--home-alice-my project--"


def test_agent_home_defaults_to_dot_rpc_agent_in_the_user_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RPC_AGENT_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert agent_home() == tmp_path / "user" / ".rpc-agent"


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/home/alice/proj", "--home-alice-proj--"),
        ("C:\\Users\\bob\\proj", "--C--Users-bob-proj--"),
        ("\\\\server\\share", "---server-share--"),
        ("//double/slash", "---double-slash--"),
        ("relative/dir", "--relative-dir--"),
        ("/", "----"),
    ],
)
def test_cwd_encoding_strips_one_leading_separator_and_dashes_slashes_and_colons(
    cwd: str, folder: str
) -> None:
    assert encode_cwd(cwd) == folder


def test_entry_ids_are_eight_hex_chars_and_unique() -> None:
    manager = SessionManager.in_memory("/p")
    ids = [eid(manager.append_custom_entry("n", {"i": i})) for i in range(2000)]
    assert all(HEX8.match(i) for i in ids)
    assert len(set(ids)) == len(ids)


@pytest.fixture
def colliding_ids(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the id generator produce a duplicate before a fresh id."""
    sequence = [0xAAAAAAAA, 0xAAAAAAAA, 0xAAAAAAAA, 0xBBBBBBBB]
    handed_out: list[str] = []

    def fake_getrandbits(bits: int) -> int:
        assert bits == 32
        value = sequence.pop(0)
        handed_out.append(f"{value:08x}")
        return value

    monkeypatch.setattr("rpc_agent.store.index._ids.getrandbits", fake_getrandbits)
    return handed_out


def test_entry_id_is_regenerated_on_collision(colliding_ids: list[str]) -> None:
    manager = SessionManager.in_memory("/p")
    first = eid(manager.append_message(user("one")))
    second = eid(manager.append_message(user("two")))
    assert first == "aaaaaaaa"
    assert second == "bbbbbbbb"
    assert colliding_ids == ["aaaaaaaa", "aaaaaaaa", "aaaaaaaa", "bbbbbbbb"]


def test_first_entry_is_a_root_and_each_append_is_a_child_of_the_previous_leaf() -> None:
    manager = SessionManager.in_memory("/p")
    a = eid(manager.append_message(user("a")))
    b = eid(manager.append_thinking_level_change("high"))
    c = eid(manager.append_message(assistant("c")))
    assert manager.require_entry(a)["parentId"] is None
    assert manager.require_entry(b)["parentId"] == a
    assert manager.require_entry(c)["parentId"] == b
    assert manager.leaf_id == c


@pytest.mark.anyio
async def test_every_append_writes_the_documented_shape(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    u = await manager.append_message(user("Hello"))
    a = await manager.append_message(assistant("Hi!"))
    await manager.append_thinking_level_change("high")
    await manager.append_model_change("openai", "gpt-4o")
    await manager.append_compaction("Summary", eid_of(u), 50000)
    await manager.append_compaction("S2", eid_of(a), 10, details={"readFiles": ["x"]}, from_hook=True)
    await manager.append_custom_entry("my-extension", {"count": 42})
    await manager.append_custom_entry("bare")
    await manager.append_custom_message_entry("my-extension", "Injected context")
    await manager.append_custom_message_entry("ext", "hidden", display=False, details={"debug": False})
    await manager.append_label_change(eid_of(u), "checkpoint-1")
    await manager.append_label_change(eid_of(u), None)
    await manager.append_session_info("Refactor auth module")
    await manager.branch_with_summary(eid_of(a), "Branch explored approach A...")
    await manager.branch_with_summary(None, "From the root", details={"k": 1}, from_hook=False)
    assert manager.session_file is not None
    lines = read_lines(manager.session_file)
    await manager.aclose()

    entries = lines[1:]
    shapes = [(e["type"], list(e)[4:]) for e in entries]
    assert [list(e)[:4] for e in entries] == [ENTRY_BASE] * len(entries)
    assert shapes == [
        ("message", ["message"]),
        ("message", ["message"]),
        ("thinking_level_change", ["thinkingLevel"]),
        ("model_change", ["provider", "modelId"]),
        ("compaction", ["summary", "firstKeptEntryId", "tokensBefore"]),
        ("compaction", ["summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"]),
        ("custom", ["customType", "data"]),
        ("custom", ["customType"]),
        ("custom_message", ["customType", "content", "display"]),
        ("custom_message", ["customType", "content", "display", "details"]),
        ("label", ["targetId", "label"]),
        ("label", ["targetId"]),
        ("session_info", ["name"]),
        ("branch_summary", ["fromId", "summary"]),
        ("branch_summary", ["fromId", "summary", "details", "fromHook"]),
    ]
    for e in entries:
        assert HEX8.match(e["id"])
        assert ISO_MS_Z.match(e["timestamp"])

    assert entries[0]["message"] == user("Hello")
    assert entries[1]["message"] == assistant("Hi!")
    assert entries[2]["thinkingLevel"] == "high"
    assert (entries[3]["provider"], entries[3]["modelId"]) == ("openai", "gpt-4o")
    assert entries[4]["firstKeptEntryId"] == u
    assert entries[4]["tokensBefore"] == 50000
    assert entries[5]["details"] == {"readFiles": ["x"]}
    assert entries[5]["fromHook"] is True
    assert entries[6]["data"] == {"count": 42}
    assert entries[8]["content"] == "Injected context"
    assert entries[8]["display"] is True
    assert entries[9]["display"] is False
    assert entries[10]["targetId"] == u
    assert entries[10]["label"] == "checkpoint-1"
    assert entries[12]["name"] == "Refactor auth module"
    assert entries[13]["parentId"] == a
    assert entries[13]["fromId"] == a
    assert entries[14]["parentId"] is None
    assert entries[14]["fromId"] == "root"

    expected_models = [
        MessageEntry,
        MessageEntry,
        ThinkingLevelChangeEntry,
        ModelChangeEntry,
        CompactionEntry,
        CompactionEntry,
        CustomEntry,
        CustomEntry,
        CustomMessageEntry,
        CustomMessageEntry,
        LabelEntry,
        LabelEntry,
        SessionInfoEntry,
        BranchSummaryEntry,
        BranchSummaryEntry,
    ]
    assert [type(parse_entry(e)) for e in entries] == expected_models


def eid_of(entry_id: str | None) -> str:
    assert entry_id is not None
    return entry_id


def test_message_models_are_written_without_none_fields(tmp_path: Path) -> None:
    from rpc_agent.protocol.entries import AssistantMessage, TextContent, ToolCall, Usage

    manager = SessionManager.in_memory("/p")
    model = AssistantMessage(
        content=[TextContent(text="x"), ToolCall(id="call_1", name="bash", arguments={"cmd": "ls"})],
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage=Usage(),
        stopReason="toolUse",
        timestamp=1,
    )
    stored = manager.require_entry(eid(manager.append_message(model)))["message"]
    assert stored["content"] == [
        {"type": "text", "text": "x"},
        {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"cmd": "ls"}},
    ]
    assert "errorMessage" not in stored
    assert stored["stopReason"] == "toolUse"


def test_malformed_message_dict_is_rejected_and_not_appended() -> None:
    from pydantic import ValidationError

    manager = SessionManager.in_memory("/p")
    with pytest.raises(ValidationError):
        manager.append_message({"role": "user", "content": "no timestamp"})
    assert manager.entries == []
    assert manager.leaf_id is None


@pytest.mark.anyio
async def test_a_summary_s_usage_is_written_between_its_details_and_from_hook(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    u = await manager.append_message(user("Hello"))
    await manager.append_message(assistant("Hi!"))
    usage = assistant("counted")["usage"]
    await manager.append_compaction("S", eid_of(u), 10, details={"k": 1}, from_hook=True, usage=usage)
    await manager.branch_with_summary(eid_of(u), "B", usage=usage)
    assert manager.session_file is not None
    lines = read_lines(manager.session_file)
    await manager.aclose()

    compaction, summary = lines[3], lines[4]
    assert list(compaction) == [
        *ENTRY_BASE,
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "usage",
        "fromHook",
    ]
    assert list(summary) == [*ENTRY_BASE, "fromId", "summary", "usage"]
    assert compaction["usage"] == summary["usage"] == usage
