"""What a tool is to the agent loop.

A tool declares its arguments as a pydantic model (the JSON Schema the model sees is generated
from it, and the loop validates the model's arguments with it, sending a clear tool error
back on failure). ``execute`` runs in the agent's task: an abort cancels it, and a tool that
starts processes must kill them on cancellation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from rpc_agent.protocol.json_schema import JsonSchema, as_json_schema
from rpc_agent.protocol.shapes import BlockDict
from rpc_agent.sandbox import Sandbox
from rpc_agent.tools.environment import DEFAULT_POLICY
from rpc_agent.tools.reaper import Reaper
from rpc_agent.tools.temp_files import UNOWNED, TempFiles


@dataclass(slots=True)
class ToolOutput:
    content: list[BlockDict]
    """Text and image blocks, as in a toolResult message."""
    details: Any = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, *, details: Any = None, is_error: bool = False) -> ToolOutput:
        return cls(content=[{"type": "text", "text": text}], details=details, is_error=is_error)


class ToolError(Exception):
    """A failure the model should read (bad path, no match, ...): becomes an error result."""


class FileAccess(Protocol):
    """Where read, write and edit get and put a text file's content.

    The disk by default (``tools.access.DiskFiles``); a front can pass its own, such as the
    editor's buffers over ACP, so the model sees and changes what the user has open, unsaved
    changes included. Failures the model should read are ToolErrors; OSErrors are the disk's.
    """

    async def read_text(self, path: Path) -> str: ...

    async def write_text(self, path: Path, text: str) -> None: ...


class CommandRunner(Protocol):
    """Runs ``bash`` somewhere other than a local process (an editor's terminal, say), with
    the tool's timeout; cancelling ``run`` must stop the command."""

    async def run(self, command: str, time_limit: float | None, ctx: ToolContext) -> ToolOutput: ...


def _disk_files() -> FileAccess:
    from rpc_agent.tools.access import DiskFiles

    return DiskFiles()


@dataclass(slots=True)
class ToolContext:
    cwd: Path
    tool_call_id: str
    on_update: Callable[[ToolOutput], None] = field(default=lambda _output: None)
    """Report partial output (the accumulated result so far, not a delta)."""
    on_output: Callable[[str], None] | None = None
    """Every piece of a command's output as it is read (the user's bash streams it whole)."""
    files: FileAccess = field(default_factory=_disk_files)
    commands: CommandRunner | None = None
    """None: ``bash`` runs a local process."""
    session_file: Path | None = None
    """The live session file: no tool may write it, under any name."""
    session_folders: tuple[Path, ...] | None = None
    """The session store's folders, which no tool may write into (None: the default home's)."""
    env: Mapping[str, str] | None = None
    """The environment of processes the tool starts; None: the default policy's (no secrets)."""

    temp_files: TempFiles = UNOWNED
    """Where files the tool leaves behind are registered, to be removed with their session."""
    sandbox: Sandbox | None = None
    """The kernel sandbox the tool's processes run in, and whose paths the file tools keep to
    (None: no sandbox)."""
    escape: Callable[[str], Awaitable[bool]] | None = None
    """Asks the host whether a command the sandbox refused may run once outside it."""
    reaper: Reaper | None = None
    """Kills the commands' process groups if the process dies without doing it (None: only
    the paths the process controls kill them)."""

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


def is_read_only(tool: Tool) -> bool:
    """Whether a tool only reads (an approval policy may let it run unasked).

    A tool says so with a ``read_only`` class attribute (MCP tools from their ``readOnlyHint``);
    a tool without one is assumed to change things.
    """
    return bool(getattr(tool, "read_only", False))


def tool_schema(tool: Tool) -> JsonSchema:
    """The JSON Schema of a tool's arguments, without pydantic's title noise.

    A tool whose schema comes from elsewhere brings its own: a client tool as ``parameters``,
    an MCP server's tool as ``input_schema``.
    """
    for attribute in ("parameters", "input_schema"):
        declared = getattr(tool, attribute, None)
        if isinstance(declared, dict):
            return as_json_schema(dict(declared))
    schema = as_json_schema(tool.Args.model_json_schema())
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return schema
