"""The one boundary check of ``protocol.json_schema``: what is not a JSON object never travels on
typed as a schema."""

from __future__ import annotations

import pytest

from rpc_agent.protocol.json_schema import JsonSchema, as_json_schema


def test_a_dict_is_taken_as_it_is() -> None:
    value = {"type": "object", "properties": {"n": {"type": "integer"}}, "x-extra": 1}
    schema: JsonSchema = as_json_schema(value)
    assert schema is value
    assert schema["properties"]["n"]["type"] == "integer"


@pytest.mark.parametrize("value", [["type", "object"], "object", True, None, 3])
def test_anything_else_is_refused_naming_its_kind(value: object) -> None:
    with pytest.raises(
        TypeError, match=f"an MCP tool's inputSchema must be a JSON object, not {type(value).__name__}"
    ):
        as_json_schema(value, "an MCP tool's inputSchema")
