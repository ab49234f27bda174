"""An MCP server's tools as agent tools: ``mcp__<server>__<tool>``, its schema, its results.

The model sees the server's own input schema; the arguments go to the server as given (the
server validates them). Results become toolResult content: text and images as they are,
embedded text resources and resource links as text, so nothing the server returns is lost.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from mcp import types
from pydantic import BaseModel, ConfigDict

from rpc_agent.mcp.connection import McpCallError, McpConnection
from rpc_agent.protocol.json_schema import JsonSchema, as_json_schema
from rpc_agent.protocol.shapes import BlockDict
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput

PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
MAX_NAME = 64
"""Tool names providers accept: ``^[a-zA-Z0-9_-]{1,64}$`` (Anthropic's rule, the strictest)."""


def tool_name(server: str, tool: str) -> str:
    return (PREFIX + _UNSAFE.sub("_", server) + "__" + _UNSAFE.sub("_", tool))[:MAX_NAME]


class McpArgs(BaseModel):
    """Any JSON object: the server's schema is what the model sees, and the server checks it."""

    model_config = ConfigDict(extra="allow")


class McpTool:
    """Built per server tool by ``make_tool`` (a subclass carries the tool's class attributes)."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]] = McpArgs
    read_only: ClassVar[bool] = False
    input_schema: ClassVar[JsonSchema]
    server_tool: ClassVar[str]

    def __init__(self, connection: McpConnection) -> None:
        self.connection = connection

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput:
        arguments = dict(args.model_extra or {}) if isinstance(args, BaseModel) else dict(args)
        try:
            result = await self.connection.call_tool(self.server_tool, arguments, ctx.tool_call_id)
        except McpCallError as exc:
            raise ToolError(str(exc)) from None
        return convert_result(result, server=self.connection.name, tool=self.server_tool)


def make_tool(connection: McpConnection, tool: types.Tool) -> McpTool:
    schema = as_json_schema(dict(tool.inputSchema or {}), "an MCP tool's inputSchema")
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    annotations = tool.annotations
    description = tool.description or (annotations.title if annotations and annotations.title else "")
    cls = type(
        "McpTool_" + _UNSAFE.sub("_", tool.name),
        (McpTool,),
        {
            "name": tool_name(connection.name, tool.name),
            "description": description or f"{tool.name} (from the MCP server {connection.name})",
            "read_only": bool(annotations and annotations.readOnlyHint),
            "input_schema": schema,
            "server_tool": tool.name,
        },
    )
    instance: McpTool = cls(connection)
    return instance


def _resource_text(resource: types.TextResourceContents | types.BlobResourceContents) -> BlockDict:
    uri = str(resource.uri)
    if isinstance(resource, types.TextResourceContents):
        return {"type": "text", "text": f'<resource uri="{uri}">\n{resource.text}\n</resource>'}
    mime = resource.mimeType or "application/octet-stream"
    if mime.startswith("image/"):
        return {"type": "image", "data": resource.blob, "mimeType": mime}
    return {"type": "text", "text": f"[binary resource {uri} ({mime}), {len(resource.blob) * 3 // 4} bytes]"}


def convert_result(result: types.CallToolResult, *, server: str, tool: str) -> ToolOutput:
    content: list[BlockDict] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, types.ImageContent):
            content.append({"type": "image", "data": block.data, "mimeType": block.mimeType})
        elif isinstance(block, types.AudioContent):
            content.append({"type": "text", "text": f"[audio ({block.mimeType}) not shown]"})
        elif isinstance(block, types.ResourceLink):
            described = f" ({block.mimeType})" if block.mimeType else ""
            about = f": {block.description}" if block.description else ""
            content.append(
                {"type": "text", "text": f"[resource {block.name}]({block.uri}){described}{about}"}
            )
        elif isinstance(block, types.EmbeddedResource):
            content.append(_resource_text(block.resource))
    if not content and result.structuredContent is not None:
        content.append({"type": "text", "text": json.dumps(result.structuredContent, ensure_ascii=False)})
    if not content:
        content.append({"type": "text", "text": "(no output)"})
    return ToolOutput(
        content=content, details={"mcpServer": server, "mcpTool": tool}, is_error=result.isError
    )
