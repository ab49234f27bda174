"""Building blocks below both the server and the session store: bytes leaving the process,
and the foreground that background work waits for."""

from .coalesce import Coalescer

__all__ = ["Coalescer"]
