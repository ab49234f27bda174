"""What a ``write`` or ``edit`` call would change, before it runs, as ACP diff content.

Editors (Zed, CodeCompanion) offer "view diff" on a permission request only when the tool call
carries a ``diff``; the same content then stays on the finished tool call, so the user reviews
the whole new text against the old one instead of a unified diff in a text block. The old text
is read through the same FileAccess the tool will use (the editor's buffer when offered).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import FileEditToolCallContent, ToolCallLocation
from pydantic import ValidationError

from rpc_agent.tools.base import FileAccess, ToolError
from rpc_agent.tools.edit import EditArgs, apply_edit


@dataclass(frozen=True, slots=True)
class Change:
    path: Path
    old_text: str | None
    """None: the file does not exist yet."""
    new_text: str
    line: int | None
    """Where the change starts (1-based), when known."""

    def diff(self) -> FileEditToolCallContent:
        return FileEditToolCallContent(
            type="diff", path=str(self.path), old_text=self.old_text, new_text=self.new_text
        )

    def location(self) -> ToolCallLocation:
        return ToolCallLocation(path=str(self.path), line=self.line)


async def _current(files: FileAccess, path: Path) -> str | None:
    try:
        return await files.read_text(path)
    except (ToolError, OSError):
        return None


async def file_change(name: str, args: Mapping[str, Any], cwd: str, files: FileAccess) -> Change | None:
    """The change a write/edit call would make; None for other tools or a call that will fail."""
    raw_path = args.get("path")
    if name not in ("write", "edit") or not isinstance(raw_path, str) or not raw_path:
        return None
    candidate = Path(raw_path).expanduser()
    path = candidate if candidate.is_absolute() else Path(cwd) / candidate
    if name == "write":
        content = args.get("content")
        if not isinstance(content, str):
            return None
        return Change(path, await _current(files, path), content, 1)
    try:
        params = EditArgs.model_validate(args)
    except ValidationError:
        return None
    old = await _current(files, path)
    if old is None:
        return None
    try:
        edited = apply_edit(old, params, path)
    except ToolError:
        return None
    return Change(path, old, edited.new_text, edited.first_line)
