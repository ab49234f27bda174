"""``write``: create or overwrite a whole file."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from rpc_agent.tools._common import coerce_args, refuse_session_files
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput


class WriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Path of the file to write, relative to the working directory or absolute.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool:
    name: ClassVar[str] = "write"
    description: ClassVar[str] = (
        "Write a file: creates it (and any missing parent folders) or replaces its whole content. "
        "The write is atomic, so the file is never left half-written. Use write for new files or "
        "complete rewrites; to change part of an existing file use edit, which is safer and "
        "cheaper. Read an existing file before overwriting it."
    )
    Args: ClassVar[type[BaseModel]] = WriteArgs

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput:
        params = coerce_args(WriteArgs, args)
        path = ctx.resolve(params.path)
        return await self._write(path, params.content, ctx)

    async def _write(self, path: Path, content: str, ctx: ToolContext) -> ToolOutput:
        files = ctx.files
        if path.is_dir():
            raise ToolError(f"{path} is a directory; give the path of a file to write.")
        await anyio.to_thread.run_sync(refuse_session_files, path, ctx)
        existed = path.exists()
        data = content.encode("utf-8")
        try:
            await files.write_text(path, content)
        except FileExistsError:
            raise ToolError(f"Cannot create the folder for {path}: a parent path is a file.") from None
        except NotADirectoryError:
            raise ToolError(f"Cannot write {path}: a parent path is a file, not a folder.") from None
        except PermissionError:
            raise ToolError(f"Permission denied writing {path}") from None
        except OSError as exc:
            raise ToolError(f"Could not write {path}: {exc.strerror or exc}") from None
        verb = "Overwrote" if existed else "Created"
        return ToolOutput.text(
            f"{verb} {path} ({len(data)} bytes written).",
            details={"path": str(path), "bytes": len(data), "created": not existed},
        )
