"""Results the handlers return in wire shape, not as their models.

A session's messages, entries and tree are stored JSON: the handlers hand the stored bytes on
(``RawJson``) inside a dict of the result's shape instead of parsing them into the model the
method table publishes. These TypedDicts are those dicts; the models stay the documentation.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

import orjson

from rpc_agent.protocol import methods as m
from rpc_agent.protocol.state_shapes import McpServerStateDict


class MessagesAnswer(TypedDict):
    """``MessagesResult`` in wire shape, the stored messages already encoded."""

    messages: orjson.Fragment


class EntriesAnswer(TypedDict):
    """``EntriesResult`` in wire shape, the stored lines already encoded."""

    entries: orjson.Fragment
    leafId: str | None


class TreeAnswer(TypedDict):
    """``TreeResult`` in wire shape: the nodes (or, with format columns, the columns) encoded."""

    leafId: str | None
    nodes: orjson.Fragment | list[m.TreeNode]
    columns: NotRequired[orjson.Fragment]
    cursor: int
    filesChanged: dict[str, int]


class ServersAnswer(TypedDict):
    """``McpServersResult`` in wire shape (each server's state without its absent fields)."""

    servers: list[McpServerStateDict]
