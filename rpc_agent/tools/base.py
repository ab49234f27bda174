"""What a tool is to the agent loop.

A tool declares its arguments as a pydantic model (the JSON Schema the model sees is generated
from it, and the loop validates the model's arguments with it, sending a clear tool error
back on failure). ``execute`` runs in the agent's task: an abort cancels it, and a tool that
starts processes must kill them on cancellation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from .environment import DEFAULT_POLICY
from .temp_files import UNOWNED, TempFiles

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
    env: Mapping[str, str] | None = None
    """The environment of processes the tool starts; None: the default policy's (no secrets)."""

    temp_files: TempFiles = UNOWNED
    """Where files the tool leaves behind are registered, to be removed with their session."""

    def process_env(self) -> dict[str, str]:
        return dict(self.env) if self.env is not None else DEFAULT_POLICY.environ()

    def resolve(self, path: str) -> Path:
        """Paths from the model are relative to the session's working directory."""
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else (self.cwd / candidate)


class Tool(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


def tool_schema(tool: Tool) -> JsonDict:
    """The JSON Schema of a tool's arguments, without pydantic's title noise."""
    schema = tool.Args.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return schema
