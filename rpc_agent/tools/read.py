"""``read``: a text file with line numbers, or an image for the model to look at."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any, overload

import anyio.to_thread
from pydantic import Field

from rpc_agent.tools import sandboxed
from rpc_agent.tools._common import BINARY_SAMPLE_BYTES, BuiltinTool, ToolArgs, looks_binary, require_file
from rpc_agent.tools.access import DiskFiles
from rpc_agent.tools.base import FileAccess, ToolContext, ToolError, ToolOutput
from rpc_agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, MAX_LINE_CHARS, format_size

MAX_IMAGE_BYTES = 3_750_000
"""Images over this would be over the API's 5 MB limit once base64-encoded."""


def image_mime_type(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP image, from its first bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


class ReadArgs(ToolArgs):
    path: str = Field(description="Path of the file to read, relative to the working directory or absolute.")
    offset: int | None = Field(
        default=None, ge=1, description="Line number to start reading from (1-based). Default: 1."
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"Maximum number of lines to return. Default: {DEFAULT_MAX_LINES}."
    )


class ReadTool(BuiltinTool[ReadArgs]):
    name = "read"
    read_only = True
    description = (
        "Read a file from the filesystem. Text files come back with line numbers "
        "(`<number>\\t<line>`, numbers are for reference only and are not part of the file). "
        f"At most {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB are returned per call "
        f"(whichever comes first) and lines longer than {MAX_LINE_CHARS} characters are cut; "
        "when the output is truncated it says which offset to continue from. Use offset/limit to "
        "page through large files. PNG, JPEG, GIF and WebP images are returned as images you can "
        "see. Other binary files are refused. Read a file before editing it."
    )

    async def run(self, params: ReadArgs, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(params.path)
        sandboxed.check_read(path, ctx)
        if isinstance(ctx.files, DiskFiles):
            return await anyio.to_thread.run_sync(self._read, path, params)
        return await self._read_through(path, params, ctx.files)

    async def _read_through(self, path: Path, params: ReadArgs, files: FileAccess) -> ToolOutput:
        """A text file's content from ``files`` (an editor's buffer, unsaved changes included);
        whether it is a text file at all, and images, come from the disk."""
        found = await anyio.to_thread.run_sync(self._read, path, params, False)
        if found is not None:
            return found
        text = await files.read_text(path)
        lines = io.BytesIO(text.encode("utf-8", "surrogatepass"))
        return await anyio.to_thread.run_sync(self._text, path, lines, params)

    @overload
    def _read(self, path: Path, params: ReadArgs) -> ToolOutput: ...
    @overload
    def _read(self, path: Path, params: ReadArgs, text: bool) -> ToolOutput | None: ...
    def _read(self, path: Path, params: ReadArgs, text: bool = True) -> ToolOutput | None:
        """The result for ``path``; with ``text`` False, None for a text file (not read)."""
        info = require_file(
            path,
            directory=". Use ls to list its contents.",
            other=" (a device, FIFO or socket); read only reads files.",
        )
        try:
            with path.open("rb") as handle:
                head = handle.read(BINARY_SAMPLE_BYTES)
                mime = image_mime_type(head)
                if mime is not None:
                    if info.st_size > MAX_IMAGE_BYTES:
                        raise ToolError(
                            f"{path} is a {mime} image of {format_size(info.st_size)}, over the "
                            f"{format_size(MAX_IMAGE_BYTES)} that can be sent; resize it first."
                        )
                    data = head + handle.read()
                    return ToolOutput(
                        content=[
                            {
                                "type": "text",
                                "text": f"Read image file {path} [{mime}, {format_size(len(data))}]",
                            },
                            {
                                "type": "image",
                                "data": base64.b64encode(data).decode("ascii"),
                                "mimeType": mime,
                            },
                        ],
                        details={"path": str(path), "mimeType": mime, "bytes": len(data)},
                    )
                if looks_binary(head):
                    raise ToolError(
                        f"{path} is a binary file ({format_size(info.st_size)}); read only shows text "
                        "files and PNG/JPEG/GIF/WebP images. Use bash (e.g. `file`, `xxd | head`) to inspect it."
                    )
                if not text:
                    return None
                handle.seek(0)
                return self._text(path, handle, params)
        except PermissionError:
            raise ToolError(f"Permission denied: {path}") from None
        except IsADirectoryError:
            raise ToolError(f"{path} is a directory, not a file. Use ls to list its contents.") from None

    def _text(self, path: Path, handle: Any, params: ReadArgs) -> ToolOutput:
        start = params.offset or 1
        limit = params.limit or DEFAULT_MAX_LINES
        shown: list[str] = []
        used_bytes = 0
        stopped_by: str | None = None
        cut_lines = 0
        total = 0
        for total, raw in enumerate(handle, start=1):
            if total < start or stopped_by is not None:
                continue
            if len(shown) >= limit:
                stopped_by = "limit"
                continue
            line = raw.decode("utf-8", "replace").rstrip("\n").removesuffix("\r")
            if len(line) > MAX_LINE_CHARS:
                line = f"{line[:MAX_LINE_CHARS]}... [line cut: {len(line) - MAX_LINE_CHARS} more chars]"
                cut_lines += 1
            numbered = f"{total:>6}\t{line}"
            size = len(numbered.encode("utf-8")) + 1
            if shown and used_bytes + size > DEFAULT_MAX_BYTES:
                stopped_by = "bytes"
                continue
            shown.append(numbered)
            used_bytes += size
        details: dict[str, Any] = {"path": str(path), "totalLines": total}
        if total == 0:
            if start > 1:
                raise ToolError(f"Offset {start} is beyond the end of {path}: the file is empty.")
            return ToolOutput.text(f"(empty file: {path})", details=details)
        if start > total:
            raise ToolError(
                f"Offset {start} is beyond the end of {path}: the file has {total} line{'s' * (total != 1)}."
            )
        last = start + len(shown) - 1
        text = "\n".join(shown)
        details.update(startLine=start, endLine=last, truncated=last < total)
        notes: list[str] = []
        if last < total:
            reason = (
                f"{format_size(DEFAULT_MAX_BYTES)} output limit"
                if stopped_by == "bytes"
                else f"{limit}-line limit"
            )
            notes.append(
                f"[Showing lines {start}-{last} of {total} ({reason}). Use offset={last + 1} to continue.]"
            )
        if cut_lines:
            notes.append(
                f"[{cut_lines} line{'s' * (cut_lines != 1)} longer than {MAX_LINE_CHARS} chars cut; "
                "use bash (e.g. `cut -c` or `fold`) to see them in full.]"
            )
        if notes:
            text += "\n\n" + "\n".join(notes)
        return ToolOutput.text(text, details=details)
