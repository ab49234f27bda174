"""protocol/ must be what the models generate today."""

from __future__ import annotations

from pathlib import Path

import orjson

from child_python import modules_loaded_by
from rpc_agent.methods.handlers import Methods
from rpc_agent.protocol.base import JsonDict, pruned
from rpc_agent.protocol.generate import OUTPUT, render


def test_protocol_folder_is_fresh() -> None:
    rendered = render()
    for name, content in rendered.items():
        on_disk = (OUTPUT / name).read_bytes()
        assert on_disk == content, f"protocol/{name} is stale: run python -m rpc_agent.protocol.generate"


def test_schema_lists_every_method_with_resolvable_refs() -> None:
    schema = orjson.loads((OUTPUT / "schema.json").read_bytes())
    names = [spec.name for spec in Methods.for_docs().registry.methods]
    assert sorted(schema["methods"]) == sorted(names)
    definitions = schema["$defs"]
    for name, method in schema["methods"].items():
        for part in ("params", "result"):
            ref = method[part]
            if ref is not None:
                assert ref["$ref"].rsplit("/", 1)[-1] in definitions, (name, part)


def test_schema_covers_events_and_entries() -> None:
    schema = orjson.loads(Path(OUTPUT / "schema.json").read_bytes())
    event_union = schema["$defs"]["EventSchema"]
    event_types = set(event_union["discriminator"]["mapping"])
    assert {
        "agent_start",
        "message_update",
        "tool_execution_end",
        "session_changed",
        "compaction_end",
    } <= event_types
    entry_types = set(schema["$defs"]["EntrySchema"]["discriminator"]["mapping"])
    assert {
        "message",
        "compaction",
        "branch_summary",
        "label",
        "session_info",
        "custom_message",
    } <= entry_types


def test_the_protocol_package_is_the_bottom_layer() -> None:
    """rpc_agent.protocol imports nothing else of ours: the wire and file shapes, the method
    table and the error codes stand on pydantic alone."""
    loaded = modules_loaded_by(
        "import rpc_agent.protocol.generate, rpc_agent.protocol.table, rpc_agent.protocol.errors"
    )
    assert [m for m in loaded if m.startswith("rpc_agent.") and not m.startswith("rpc_agent.protocol")] == []


def test_pruned_drops_members_at_every_depth_and_leaves_the_value_given_alone() -> None:
    entry: JsonDict = {"id": "a", "drop": 1, "message": {"content": [{"drop": 2, "text": "t"}], "x": None}}
    slim = pruned(entry, lambda key, _value: key == "drop")
    assert slim == {"id": "a", "message": {"content": [{"text": "t"}], "x": None}}
    assert pruned(entry, lambda _key, value: value is None)["message"] == {
        "content": [{"drop": 2, "text": "t"}]
    }
    assert entry["drop"] == 1
    assert entry["message"]["content"][0]["drop"] == 2
