"""Results the handlers return in wire shape, not as their models.

A session's messages, entries and tree are stored JSON: the handlers hand the stored bytes on
(``RawJson``) inside a dict of the result's shape instead of parsing them into the model the
method table publishes. These TypedDicts are those dicts; the models stay the documentation.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

import orjson

from rpc_agent.protocol import methods as m
from rpc_agent.protocol.state_shapes import McpServerStateDict, StateDict


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


class ServerInfoDict(TypedDict):
    name: str
    version: str


class CapabilitiesDict(TypedDict):
    """``Capabilities`` in wire shape."""

    tree: bool
    fork: bool
    compaction: bool
    images: bool
    providers: list[str]
    errorCodes: dict[str, int]


class AcceptedCapabilitiesDict(TypedDict):
    """``AcceptedCapabilities`` in wire shape."""

    approvals: bool
    approvalPolicy: Literal["never", "writes", "all"]
    hooks: list[str]
    tools: list[str]
    elicitation: bool
    rejected: list[str]


class InitializeAnswer(TypedDict):
    """``InitializeResult`` in wire shape: a start answers its first request without building
    the result's models (the client's accepted capabilities, when it declared some, are dumped)."""

    protocolVersion: str
    serverInfo: ServerInfoDict
    capabilities: CapabilitiesDict
    methods: list[str]
    state: StateDict
    client: AcceptedCapabilitiesDict | None
