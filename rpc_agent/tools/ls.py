"""``ls``: the entries of one directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio.to_thread
from pydantic import Field

from rpc_agent.tools import sandboxed
from rpc_agent.tools._common import BuiltinTool, ToolArgs, limit_field, require_dir
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput

DEFAULT_LIMIT = 500


class LsArgs(ToolArgs):
    path: str | None = Field(default=None, description="Directory to list. Default: the working directory.")
    limit: int = limit_field(DEFAULT_LIMIT, "entries")


class LsTool(BuiltinTool[LsArgs]):
    name = "ls"
    read_only = True
    description = (
        "List the entries of one directory, sorted alphabetically, folders marked with a trailing "
        "`/`, dotfiles and .gitignored entries included. Not recursive: use find "
        f"for a tree search. Returns at most `limit` entries (default {DEFAULT_LIMIT})."
    )

    async def run(self, params: LsArgs, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(params.path or ".")
        sandboxed.check_read(path, ctx)
        return await anyio.to_thread.run_sync(self._list, path, params.limit)

    @staticmethod
    def _list(path: Path, limit: int) -> ToolOutput:
        require_dir(path, ". Use read to see a file.")
        try:
            with os.scandir(path) as scan:
                entries = [f"{entry.name}/" if entry.is_dir() else entry.name for entry in scan]
        except PermissionError:
            raise ToolError(f"Permission denied: {path}") from None
        entries.sort(key=lambda name: (name.lower(), name))
        details: dict[str, Any] = {"path": str(path), "count": len(entries)}
        if not entries:
            return ToolOutput.text(f"(empty directory: {path})", details=details)
        text = "\n".join(entries[:limit])
        if len(entries) > limit:
            text += (
                f"\n\n[Showing the first {limit} of {len(entries)} entries (the limit). "
                "Raise limit, or use find with a pattern.]"
            )
        details["limitReached"] = len(entries) > limit
        return ToolOutput.text(text, details=details)
