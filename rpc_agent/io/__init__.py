"""Building blocks for bytes leaving the process; below both the server and the session store."""

from .coalesce import Coalescer

__all__ = ["Coalescer"]
