"""The agent: turn loop, queues, the AgentSession that the fronts (JSON-RPC, ACP) drive."""
