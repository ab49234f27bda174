"""Helpers shared by the tool tests."""

from __future__ import annotations

from rpc_agent.tools.base import ToolOutput


def text_of(output: ToolOutput) -> str:
    """The text blocks of a tool result, joined."""
    return "".join(str(block["text"]) for block in output.content if block.get("type") == "text")


def assert_lists(output: ToolOutput, expected: list[str]) -> None:
    """A listing tool's result: exactly ``expected``, one a line in order, and their count."""
    assert text_of(output).splitlines() == expected
    assert output.details["count"] == len(expected)
