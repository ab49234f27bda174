"""``find``: file paths matching a glob, the way a developer's tree looks (no ignored files)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.from_thread
import anyio.to_thread
from pydantic import Field

from rpc_agent.tools import sandboxed
from rpc_agent.tools._common import BuiltinTool, ToolArgs, limit_field, require_dir
from rpc_agent.tools._walk import GlobMatcher, walk
from rpc_agent.tools.base import ToolContext, ToolOutput
from rpc_agent.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

DEFAULT_LIMIT = 1000


class FindArgs(ToolArgs):
    pattern: str = Field(
        min_length=1,
        description="Glob to match, e.g. '*.py' (a name, at any depth), 'src/**/*.ts' or '**/test_*.py' "
        "(a path relative to the search directory).",
    )
    path: str | None = Field(
        default=None, description="Directory to search in. Default: the working directory."
    )
    limit: int = limit_field(DEFAULT_LIMIT, "results")


class FindTool(BuiltinTool[FindArgs]):
    name = "find"
    read_only = True
    description = (
        "Find files (and folders, shown with a trailing `/`) whose name or path matches a glob. "
        "A pattern without `/` matches names at any depth ('*.py'); with `/` it matches the path "
        "relative to the search directory ('src/**/*.ts'). Results are paths relative to the "
        "search directory, sorted. Skips .git, node_modules and .gitignored paths. Returns at most "
        f"`limit` paths (default {DEFAULT_LIMIT}) and {DEFAULT_MAX_BYTES // 1024}KB. Use find to locate "
        "files by name; use grep to search inside files and ls to look at one folder."
    )

    async def run(self, params: FindArgs, ctx: ToolContext) -> ToolOutput:
        root = ctx.resolve(params.path or ".")
        sandboxed.check_read(root, ctx)
        require_dir(root, "; find searches inside a directory.")
        found = await anyio.to_thread.run_sync(
            self._find, root, GlobMatcher(params.pattern), anyio.from_thread.check_cancelled
        )
        details: dict[str, Any] = {"count": len(found), "root": str(root)}
        if not found:
            return ToolOutput.text(f"No files matching {params.pattern!r} in {root}.", details=details)
        shown = found[: params.limit]
        result = truncate_head("\n".join(shown), max_lines=len(shown) + 1)
        text = result.content
        notes: list[str] = []
        if len(found) > params.limit:
            notes.append(
                f"[Showing the first {params.limit} of {len(found)} matches (the limit). "
                "Use a narrower pattern or path, or raise limit.]"
            )
        if result.truncated:
            notes.append(
                f"[Output cut at {format_size(DEFAULT_MAX_BYTES)}: showing {result.output_lines} of "
                f"{len(found)} matches. Use a narrower pattern or path.]"
            )
        if notes:
            text += "\n\n" + "\n".join(notes)
        details.update(limitReached=len(found) > params.limit, truncated=result.truncated)
        return ToolOutput.text(text, details=details)

    @staticmethod
    def _find(root: Path, matcher: GlobMatcher, check: Callable[[], None]) -> list[str]:
        found = [
            f"{rel}/" if is_dir else rel
            for _path, rel, is_dir in walk(root, check=check)
            if matcher.matches(rel)
        ]
        found.sort()
        return found
