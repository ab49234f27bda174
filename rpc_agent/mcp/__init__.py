"""MCP client connections (the official ``mcp`` SDK) whose tools the agent can call.

``config`` says which servers a session runs, ``connection`` owns one server, ``tools`` makes
its tools agent tools, ``manager`` runs a session's servers together.
"""

from rpc_agent.mcp.config import McpServerConfig, from_wire, from_wire_json
from rpc_agent.mcp.manager import McpManager, UnknownServerError

__all__ = ["McpManager", "McpServerConfig", "UnknownServerError", "from_wire", "from_wire_json"]
