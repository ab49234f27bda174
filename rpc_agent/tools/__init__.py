"""The coding tools the model can call (read, write, edit, bash, grep, find, ls)."""

from rpc_agent.tools.base import Tool, ToolContext, ToolError, ToolOutput, tool_schema
from rpc_agent.tools.bash import BashArgs, BashTool
from rpc_agent.tools.edit import EditArgs, EditTool
from rpc_agent.tools.find import FindArgs, FindTool
from rpc_agent.tools.grep import GrepArgs, GrepTool
from rpc_agent.tools.ls import LsArgs, LsTool
from rpc_agent.tools.read import ReadArgs, ReadTool
from rpc_agent.tools.write import WriteArgs, WriteTool


def default_tools() -> list[Tool]:
    """Fresh instances of the built-in tools, in the order the model sees them."""
    return [ReadTool(), BashTool(), EditTool(), WriteTool(), GrepTool(), FindTool(), LsTool()]


__all__ = [
    "BashArgs",
    "BashTool",
    "EditArgs",
    "EditTool",
    "FindArgs",
    "FindTool",
    "GrepArgs",
    "GrepTool",
    "LsArgs",
    "LsTool",
    "ReadArgs",
    "ReadTool",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "WriteArgs",
    "WriteTool",
    "default_tools",
    "tool_schema",
]
