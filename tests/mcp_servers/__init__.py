"""The MCP servers the tests run (``mcp_server.py``, ``eliciting_server.py`` and its SDK twin),
and how the tests start them (``processes``). Kept empty: a server run as a script imports its
siblings through this package, and its start-up is what the hand-written servers keep short."""
