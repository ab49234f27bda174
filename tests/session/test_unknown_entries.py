"""Entry types and fields we do not know are kept verbatim and never reach the model."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from session_testlib import (
    assistant,
    context_of,
    entry,
    header,
    message_entry,
    raw_lines,
    read_lines,
    user,
    write_jsonl,
    write_session,
)

from rpc_agent.protocol.entries import (
    MessageEntry,
    ModeChangeEntry,
    SessionInitEntry,
    TtsrInjectionEntry,
    parse_entry,
)
from rpc_agent.store import SessionManager

U1 = {**message_entry("00000001", None, 1, {**user("u1"), "x-trace": "abc"}), "vendorMeta": {"k": [1, 2]}}
BODY: list[Mapping[str, Any]] = [
    U1,
    entry("ttsr_injection", "00000002", "00000001", 2, injectedRules=["ruleA", "ruleB"]),
    entry("quantum_fork", "00000003", "00000002", 3, qubits=[1, 2], nested={"deep": True}, summary="no"),
    {"type": "telemetry", "payload": {"cpu": 0.5}},  # not even a tree node
    entry("session_init", "00000004", "00000003", 4, systemPrompt="sys", task="t", tools=["read"]),
    entry("mode_change", "00000005", "00000004", 5, mode="plan", data={"planFile": "/tmp/plan.md"}),
    message_entry("00000006", "00000005", 6, assistant("a1")),
]


def unknown_file(path: Path, version: int = 3) -> bytes:
    return write_jsonl(path, [header(version=version, title="extra header field"), *BODY])


def test_unknown_types_and_fields_load_and_never_reach_the_context(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    unknown_file(path)
    with SessionManager.open(path) as manager:
        assert manager.load_report.skipped == 0
        assert manager.leaf_id == "00000006"
        messages = manager.build_session_context().messages
        tree_ids = [node.entry["id"] for node in manager.get_tree()]
        assert manager.get_entry("00000003") == BODY[2]
    assert context_of(manager) == [("user", "u1"), ("assistant", "a1")]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert all("vendorMeta" not in m and "qubits" not in m for m in messages)
    assert tree_ids == ["00000001", "00000002", "00000003", "00000004", "00000005", "00000006"]


@pytest.mark.anyio
async def test_unknown_lines_are_byte_identical_after_appending_and_reopening(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    unknown_file(path)
    original = raw_lines(path)
    manager = SessionManager.open(path)
    await manager.append_message(user("u2"))
    await manager.aclose()
    with SessionManager.open(path) as again:
        again.append_message(assistant("a2"))
    assert raw_lines(path)[: len(original)] == original
    assert len(raw_lines(path)) == len(original) + 2


def test_unknown_lines_survive_the_atomic_rewrite_of_a_migration(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    unknown_file(path, version=2)
    original = raw_lines(path)
    with SessionManager.open(path) as manager:
        assert manager.load_report.migrated_from == 2
    rewritten = raw_lines(path)
    assert rewritten[1:] == original[1:]
    head = orjson.loads(rewritten[0])
    assert head == {**orjson.loads(original[0]), "version": 3}
    assert list(head) == list(orjson.loads(original[0]))


def test_unknown_lines_of_a_v1_file_keep_their_content_and_gain_ids(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    v1_body = [{k: v for k, v in line.items() if k not in ("id", "parentId")} for line in BODY]
    write_jsonl(path, [header(version=None), *v1_body])
    with SessionManager.open(path) as manager:
        assert manager.load_report.migrated_from == 1
        context = context_of(manager)
    lines = read_lines(path)[1:]
    assert [{k: v for k, v in line.items() if k not in ("id", "parentId")} for line in lines] == v1_body
    assert [list(line)[: len(old)] for line, old in zip(lines, v1_body, strict=True)] == [
        list(o) for o in v1_body
    ]
    assert context == [("user", "u1"), ("assistant", "a1")]


def test_typed_views_keep_unknown_fields_and_pass_unknown_types_through() -> None:
    assert parse_entry(BODY[2]) == BODY[2]  # unknown type: the dict itself
    message = parse_entry(U1)
    assert isinstance(message, MessageEntry)
    assert message.model_dump(mode="json", exclude_unset=True) == U1
    assert isinstance(parse_entry(BODY[1]), TtsrInjectionEntry)
    assert isinstance(parse_entry(BODY[4]), SessionInitEntry)
    mode = parse_entry(BODY[5])
    assert isinstance(mode, ModeChangeEntry)
    assert mode.model_dump(mode="json", exclude_unset=True) == BODY[5]


@pytest.mark.parametrize("lazy", [True, False])
def test_lines_whose_fields_are_not_of_their_shape_are_kept_but_never_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lazy: bool
) -> None:
    """The shapes say what a field should hold; what a file holds is checked where it is read."""
    if not lazy:
        monkeypatch.setenv("RPC_AGENT_EAGER_LOAD", "1")
    odd: list[Mapping[str, Any]] = [
        entry("message", "00000002", "00000001", 2, message="not an object"),
        {"type": "custom", "customType": "no-id"},  # not a tree node
        {**entry("custom", "x", "00000002", 3, customType="n"), "id": 7},  # an id that is no string
        entry("label", "0000000a", "00000002", 4, targetId=["00000001"], label="L"),
    ]
    path = tmp_path / "odd.jsonl"
    write_session(
        path,
        message_entry("00000001", None, 1, user("u1")),
        *odd,
        message_entry("00000003", "0000000a", 5, assistant("a1")),
    )
    with SessionManager.open(path) as manager:
        assert [e.get("id") for e in manager.entries] == [
            "00000001",
            "00000002",
            None,
            7,
            "0000000a",
            "00000003",
        ]
        assert context_of(manager) == [("user", "u1"), ("assistant", "a1")]
        assert manager.labels == {}
        columns = orjson.loads(manager.tree_json(columns=True))
        changed = orjson.loads(manager.tree_json(since=0, columns=True))
    assert columns["id"] == ["00000001", "00000002", "00000003"]
    assert columns["role"] == ["user", None, "assistant"]
    assert columns["preview"][1] == ""
    assert sorted(changed["id"]) == ["00000001", "00000002", "00000003"]
