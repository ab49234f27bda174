from __future__ import annotations

from rpc_agent.tools import default_tools, tool_schema


def test_default_tools_order_and_fresh_instances() -> None:
    first, second = default_tools(), default_tools()
    assert [tool.name for tool in first] == ["read", "bash", "edit", "write", "grep", "find", "ls"]
    assert all(a is not b for a, b in zip(first, second, strict=True))


def test_every_tool_has_a_description_and_a_clean_schema() -> None:
    for tool in default_tools():
        assert len(tool.description) > 80, tool.name
        schema = tool_schema(tool)
        assert schema["type"] == "object"
        assert "title" not in schema
        assert schema.get("additionalProperties") is False
        for prop in schema["properties"].values():
            assert "title" not in prop
            assert prop.get("description"), tool.name


def test_required_arguments() -> None:
    required = {tool.name: set(tool_schema(tool).get("required", [])) for tool in default_tools()}
    assert required == {
        "read": {"path"},
        "bash": {"command"},
        "edit": {"path", "oldText", "newText"},
        "write": {"path", "content"},
        "grep": {"pattern"},
        "find": {"pattern"},
        "ls": set(),
    }
