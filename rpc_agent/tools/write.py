"""``write``: create or overwrite a whole file."""

from __future__ import annotations

import anyio.to_thread
from pydantic import Field

from rpc_agent.tools._common import BuiltinTool, ToolArgs, check_writable, write_file
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput


class WriteArgs(ToolArgs):
    path: str = Field(description="Path of the file to write, relative to the working directory or absolute.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(BuiltinTool[WriteArgs]):
    name = "write"
    description = (
        "Write a file: creates it (and any missing parent folders) or replaces its whole content. "
        "The write is atomic, so the file is never left half-written. Use write for new files or "
        "complete rewrites; to change part of an existing file use edit, which is safer and "
        "cheaper. Read an existing file before overwriting it."
    )

    async def run(self, params: WriteArgs, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(params.path)
        if path.is_dir():
            raise ToolError(f"{path} is a directory; give the path of a file to write.")
        await anyio.to_thread.run_sync(check_writable, path, ctx)
        existed = path.exists()
        data = params.content.encode("utf-8")
        await write_file(ctx.files, path, params.content)
        verb = "Overwrote" if existed else "Created"
        return ToolOutput.text(
            f"{verb} {path} ({len(data)} bytes written).",
            details={"path": str(path), "bytes": len(data), "created": not existed},
        )
