"""``grep``: search file contents for a pattern, with ripgrep when it is there.

With ``rg`` on PATH the search runs there (its .gitignore handling, its regex dialect). Without
it a Python walker does the same job: .git, node_modules and .gitignored paths are skipped,
binary files too, and the pattern is a Python regex (the common syntax is the same).
"""

from __future__ import annotations

import base64
import contextlib
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import orjson
from anyio.abc import ByteReceiveStream, Process
from pydantic import Field

from rpc_agent.tools import sandboxed
from rpc_agent.tools._common import (
    BINARY_SAMPLE_BYTES,
    BuiltinTool,
    ToolArgs,
    display_path,
    limit_field,
    looks_binary,
    require_exists,
)
from rpc_agent.tools._walk import GlobMatcher, walk
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput
from rpc_agent.tools.truncate import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_CHARS,
    format_size,
    shorten_line,
    truncate_head,
)

DEFAULT_LIMIT = 100
MAX_FILE_BYTES = 20 * 1024 * 1024
"""The Python fallback skips files larger than this."""
_STDERR_KEEP = 4096


class GrepArgs(ToolArgs):
    pattern: str = Field(
        min_length=1, description="Regular expression to search for (or literal text with literal=true)."
    )
    path: str | None = Field(
        default=None, description="File or directory to search. Default: the working directory."
    )
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. '*.py' (any depth) or 'src/**/*.ts' "
        "(relative to path).",
    )
    ignoreCase: bool = Field(default=False, description="Case-insensitive search. Default: false.")
    literal: bool = Field(
        default=False, description="Treat pattern as plain text, not a regex. Default: false."
    )
    context: int = Field(
        default=0, ge=0, le=100, description="Lines of context before and after each match. Default: 0."
    )
    limit: int = limit_field(DEFAULT_LIMIT, "matching lines")


@dataclass(slots=True)
class _Hit:
    path: Path
    line: int
    text: str
    is_match: bool


@dataclass(slots=True)
class _Search:
    limit: int
    context: int
    hits: list[_Hit] = field(default_factory=list)
    matches: int = 0
    limit_hit: bool = False
    last_match: tuple[Path, int] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return self.matches >= self.limit

    def add(self, hit: _Hit) -> bool:
        """Record a line; False once the limit is reached and its trailing context is complete.

        Past the limit, a line that is neither a match nor trailing context of the last match
        belongs to a further match (as a match or its leading context): there are more matches.
        """
        if self.full and (
            hit.is_match
            or self.last_match is None
            or hit.path != self.last_match[0]
            or hit.line > self.last_match[1] + self.context
        ):
            self.limit_hit = True
            return False
        self.hits.append(hit)
        if hit.is_match:
            self.matches += 1
            self.last_match = (hit.path, hit.line)
        return True


def _kill(process: Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()


def _clean(text: str) -> str:
    return text.removesuffix("\n").removesuffix("\r")


class GrepTool(BuiltinTool[GrepArgs]):
    name = "grep"
    read_only = True
    description = (
        "Search file contents for a regular expression (or literal text with literal=true) under a "
        "directory or in one file. Respects .gitignore and skips .git, node_modules and binary files. "
        "Output lines are `path:line: text` (context lines: `path-line- text`), paths relative to the "
        f"working directory. Returns at most `limit` matching lines (default {DEFAULT_LIMIT}), lines "
        f"cut at {GREP_MAX_LINE_CHARS} chars, {DEFAULT_MAX_BYTES // 1024}KB in all; a note says when "
        "results were cut, then narrow the pattern, path or glob. Use grep to find where something "
        "is defined or used; use find to look for files by name."
    )

    async def run(self, params: GrepArgs, ctx: ToolContext) -> ToolOutput:
        root = ctx.resolve(params.path or ".")
        sandboxed.check_read(root, ctx)
        require_exists(root)
        search = _Search(limit=params.limit, context=params.context)
        rg = shutil.which("rg")
        if rg is not None:
            await self._ripgrep(rg, root, params, search, ctx)
        else:
            await anyio.to_thread.run_sync(
                self._python, root, params, search, anyio.from_thread.check_cancelled
            )
        return self._format(search, params, ctx.cwd)

    # --- ripgrep -----------------------------------------------------------------------------

    async def _ripgrep(
        self, rg: str, root: Path, params: GrepArgs, search: _Search, ctx: ToolContext
    ) -> None:
        env = ctx.process_env()
        command = [rg, "--json", "--hidden", "--no-require-git", "--sort=path"]
        command += ["--glob", "!.git", "--glob", "!node_modules"]
        if params.ignoreCase:
            command.append("--ignore-case")
        if params.literal:
            command.append("--fixed-strings")
        if params.context:
            command += ["--context", str(params.context)]
        if params.glob:
            command += ["--glob", params.glob]
        command += ["--regexp", params.pattern, "--", str(root)]

        command, env = sandboxed.wrap(command, env, ctx)
        process = await anyio.open_process(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        errors = bytearray()
        try:
            async with anyio.create_task_group() as group:
                assert process.stdout is not None
                assert process.stderr is not None
                group.start_soon(self._collect_stderr, process.stderr, errors)
                await self._read_events(process.stdout, search)
                if search.limit_hit:
                    _kill(process)
            await process.wait()
        finally:
            # Still running here only when stopped early: at the limit, on an error or a cancel.
            _kill(process)
            with anyio.CancelScope(shield=True):
                await process.aclose()
        stderr = errors.decode("utf-8", "replace").strip()
        if process.returncode == 2 and not search.limit_hit:
            if not search.hits:
                raise ToolError(f"grep failed: {stderr or 'ripgrep exited with code 2'}")
            search.notes.append(f"[Some files could not be searched: {stderr.splitlines()[0]}]")

    @staticmethod
    async def _collect_stderr(stream: ByteReceiveStream, into: bytearray) -> None:
        async for chunk in stream:
            if len(into) < _STDERR_KEEP:
                into.extend(chunk[: _STDERR_KEEP - len(into)])

    @staticmethod
    def _field(value: dict[str, Any]) -> str:
        if "text" in value:
            return str(value["text"])
        return base64.b64decode(value.get("bytes", "")).decode("utf-8", "replace")

    async def _read_events(self, stream: ByteReceiveStream, search: _Search) -> None:
        pending: list[bytes] = []  # a line still arriving, kept in pieces: joined once, when whole
        async for chunk in stream:
            *lines, rest = chunk.split(b"\n")
            if lines and pending:
                lines[0] = b"".join([*pending, lines[0]])
                pending.clear()
            if rest:
                pending.append(rest)
            for line in lines:
                if line and not self._event(orjson.loads(line), search):
                    return

    def _event(self, event: dict[str, Any], search: _Search) -> bool:
        kind = event.get("type")
        if kind not in ("match", "context"):
            return True
        data = event["data"]
        hit = _Hit(
            path=Path(self._field(data["path"])),
            line=int(data.get("line_number") or 0),
            text=_clean(self._field(data["lines"])),
            is_match=kind == "match",
        )
        return search.add(hit)

    # --- Python fallback -----------------------------------------------------------------------

    def _python(self, root: Path, params: GrepArgs, search: _Search, check: Callable[[], None]) -> None:
        pattern = re.escape(params.pattern) if params.literal else params.pattern
        try:
            regex = re.compile(pattern, re.IGNORECASE if params.ignoreCase else 0)
        except re.error as exc:
            raise ToolError(f"Invalid regular expression {params.pattern!r}: {exc}") from None
        files: Iterator[Path]
        if root.is_dir():
            matcher = GlobMatcher(params.glob) if params.glob else None
            files = (
                path
                for path, rel, is_dir in walk(root, check=check)
                if not is_dir and (matcher is None or matcher.matches(rel))
            )
        else:
            files = iter([root])
        for path in files:
            check()
            if not self._search_file(path, regex, search):
                return

    def _search_file(self, path: Path, regex: re.Pattern[str], search: _Search) -> bool:
        try:
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                return True
            with path.open("rb") as handle:
                if looks_binary(handle.read(BINARY_SAMPLE_BYTES)):
                    return True
                handle.seek(0)
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return True
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        context = search.context
        emitted = 0  # lines before this index are already recorded
        for index, line in enumerate(lines):
            if not regex.search(line):
                continue
            for before in range(max(emitted, index - context), index):
                if not search.add(_Hit(path, before + 1, _clean(lines[before]), False)):
                    return False
            if not search.add(_Hit(path, index + 1, _clean(line), True)):
                return False
            emitted = index + 1
            # Trailing context, stopping short of the next match (it is recorded as a match).
            for after in range(index + 1, min(len(lines), index + 1 + context)):
                if regex.search(lines[after]):
                    break
                if not search.add(_Hit(path, after + 1, _clean(lines[after]), False)):
                    return False
                emitted = after + 1
        return not search.limit_hit

    # --- output --------------------------------------------------------------------------------

    def _format(self, search: _Search, params: GrepArgs, cwd: Path) -> ToolOutput:
        details: dict[str, Any] = {"matches": search.matches, "limitReached": search.limit_hit}
        if not search.hits:
            return ToolOutput.text("No matches found.", details=details)
        out: list[str] = []
        previous: tuple[Path, int] | None = None
        cut = False
        for hit in search.hits:
            if (
                params.context
                and previous is not None
                and (hit.path != previous[0] or hit.line > previous[1] + 1)
            ):
                out.append("--")
            text, was_cut = shorten_line(hit.text, GREP_MAX_LINE_CHARS)
            cut = cut or was_cut
            sep = ":" if hit.is_match else "-"
            out.append(f"{display_path(hit.path, cwd)}{sep}{hit.line}{sep} {text}")
            previous = (hit.path, hit.line)
        result = truncate_head("\n".join(out), max_lines=len(out) + 1)
        text = result.content
        notes = list(search.notes)
        if search.limit_hit:
            notes.append(
                f"[Stopped at {params.limit} matches (the limit); there are more. Narrow the pattern, "
                "path or glob, or raise limit.]"
            )
        if result.truncated:
            notes.append(
                f"[Output cut at {format_size(DEFAULT_MAX_BYTES)}: showing {result.output_lines} of "
                f"{result.total_lines} lines. Narrow the search.]"
            )
        if cut:
            notes.append(f"[Lines longer than {GREP_MAX_LINE_CHARS} chars were cut; use read to see them.]")
        details.update(truncated=result.truncated, linesCut=cut)
        if notes:
            text += "\n\n" + "\n".join(notes)
        return ToolOutput.text(text, details=details)
