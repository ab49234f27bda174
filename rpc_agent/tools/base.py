"""What a tool is to the agent loop.

A tool declares its arguments as a pydantic model (the JSON Schema the model sees is generated
from it, and the loop validates the model's arguments with it, sending a clear tool error
back on failure). ``execute`` runs in the agent's task: an abort cancels it, and a tool that
starts processes must kill them on cancellation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

JsonDict = dict[str, Any]


@dataclass(slots=True)
class ToolOutput:
    content: list[JsonDict]
    """Text and image blocks, as in a toolResult message."""
    details: Any = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, *, details: Any = None, is_error: bool = False) -> ToolOutput:
        return cls(content=[{"type": "text", "text": text}], details=details, is_error=is_error)


class ToolError(Exception):
    """A failure the model should read (bad path, no match, ...): becomes an error result."""


@dataclass(slots=True)
class ToolContext:
    cwd: Path
    tool_call_id: str
    on_update: Callable[[ToolOutput], None] = field(default=lambda _output: None)
    """Report partial output (the accumulated result so far, not a delta)."""

    def resolve(self, path: str) -> Path:
        """Paths from the model are relative to the session's working directory."""
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else (self.cwd / candidate)


class Tool(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


def is_read_only(tool: Tool) -> bool:
    """Whether a tool only reads (an approval policy may let it run unasked).

    A tool says so with a ``read_only`` class attribute (MCP tools from their ``readOnlyHint``);
    a tool without one is assumed to change things.
    """
    return bool(getattr(tool, "read_only", False))


def tool_schema(tool: Tool) -> JsonDict:
    """The JSON Schema of a tool's arguments, without pydantic's title noise.

    A tool whose schema comes from elsewhere (an MCP server's) gives it as ``input_schema``.
    """
    given = getattr(tool, "input_schema", None)
    if isinstance(given, dict):
        return given
    schema = tool.Args.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return schema
