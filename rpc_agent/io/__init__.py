"""Building blocks below both the server and the session store: bytes leaving the process,
and the background work of the session store with the foreground it waits for."""

from rpc_agent.io.coalesce import Coalescer

__all__ = ["Coalescer"]
