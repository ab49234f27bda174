"""The one boundary check of ``protocol.json_schema``: what is not a JSON object never travels on
typed as a schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_agent.protocol.json_schema import JsonSchema, as_json_schema
from typecheck import mypy_errors


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


def test_mypy_rejects_a_misspelt_keyword_and_a_wrong_value_type(tmp_path: Path) -> None:
    """What the TypedDict is for: ``"require"`` for ``"required"`` is an error, not a dead key."""
    errors = mypy_errors(
        tmp_path,
        "schemas.py",
        "from rpc_agent.protocol.json_schema import JsonSchema\n"
        'good: JsonSchema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],'
        ' "$defs": {}, "additionalProperties": False}\n'
        'misspelt: JsonSchema = {"type": "object", "require": ["a"]}\n'
        'wrong: JsonSchema = {"type": "object", "required": "a"}\n',
    )
    assert len(errors) == 2, errors
    assert 'schemas.py:3: error: Extra key "require"' in errors[0]
    assert "schemas.py:4: error:" in errors[1]
    assert '"required"' in errors[1]
