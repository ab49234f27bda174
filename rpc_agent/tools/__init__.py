"""The coding tools the model can call (read, write, edit, bash, grep, find, ls).

The tool modules are imported by ``default_tools()``, not here: the server builds its tool list
on the first prompt, so importing this package (for ``tools.base``) stays cheap at startup.
"""

from rpc_agent.tools.base import Tool, ToolContext, ToolError, ToolOutput, tool_schema


def default_tools() -> list[Tool]:
    """Fresh instances of the built-in tools, in the order the model sees them."""
    from rpc_agent.tools.bash import BashTool
    from rpc_agent.tools.edit import EditTool
    from rpc_agent.tools.find import FindTool
    from rpc_agent.tools.grep import GrepTool
    from rpc_agent.tools.ls import LsTool
    from rpc_agent.tools.read import ReadTool
    from rpc_agent.tools.write import WriteTool

    return [ReadTool(), BashTool(), EditTool(), WriteTool(), GrepTool(), FindTool(), LsTool()]


__all__ = ["Tool", "ToolContext", "ToolError", "ToolOutput", "default_tools", "tool_schema"]
