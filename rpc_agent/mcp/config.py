"""Which MCP servers a session runs: the settings files, a project's ``.mcp.json`` and the client.

Sources, lowest precedence first (a server named again replaces the earlier one whole):

1. ``mcpServers`` in ``$RPC_AGENT_HOME/settings.json`` (the user's servers, every project);
2. ``mcpServers`` in ``<cwd>/.mcp.json`` (Claude Code's project file, read unchanged);
3. ``mcpServers`` in ``<cwd>/.rpc-agent/settings.json`` (this project, for rpc-agent only);
4. the client's list (ACP ``session/new|load|resume``, JSON-RPC ``initialize``, ``new_session``,
   ``switch_session``): the editor knows best what its user configured.

The files use Claude Code's shape, an object keyed by server name; the client uses ACP's list
of ``{name, command, args, env: [{name, value}]}`` or ``{type: "http", name, url, headers}``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rpc_agent.errors import SettingsError
from rpc_agent.protocol import methods as m
from rpc_agent.settings_files import read_each
from rpc_agent.validation import describe

logger = logging.getLogger("rpc_agent.mcp")

DEFAULT_STARTUP_TIMEOUT = 10.0
Transport = Literal["stdio", "http", "sse"]


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class McpSettings:
    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT


class McpConfigError(SettingsError):
    pass


class _FileServer(BaseModel):
    """One entry of a file's ``mcpServers`` object (Claude Code's shape)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    type: Literal["stdio", "http", "sse", "streamable-http"] | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    disabled: bool = False


class _File(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    mcpServers: dict[str, _FileServer] = Field(default_factory=dict)
    mcpStartupTimeoutMs: int | None = Field(default=None, gt=0)


def _from_file_entry(name: str, entry: _FileServer, where: Path) -> McpServerConfig:
    kind = entry.type or ("stdio" if entry.command else "http")
    if kind == "stdio":
        if not entry.command:
            raise McpConfigError(f"{where}: MCP server {name!r} has no command")
        return McpServerConfig(
            name=name,
            transport="stdio",
            command=entry.command,
            args=tuple(entry.args),
            env=tuple(entry.env.items()),
        )
    if not entry.url:
        raise McpConfigError(f"{where}: MCP server {name!r} has no url")
    return McpServerConfig(
        name=name,
        transport="sse" if kind == "sse" else "http",
        url=entry.url,
        headers=tuple(entry.headers.items()),
    )


def from_wire(servers: list[m.McpServer] | None) -> list[McpServerConfig]:
    """The client's list (ACP and JSON-RPC share the shape)."""
    configs: list[McpServerConfig] = []
    for server in servers or []:
        if isinstance(server, m.McpServerHttp):
            configs.append(
                McpServerConfig(
                    name=server.name,
                    transport="http",
                    url=server.url,
                    headers=tuple((h.name, h.value) for h in server.headers),
                )
            )
        else:
            configs.append(
                McpServerConfig(
                    name=server.name,
                    transport="stdio",
                    command=server.command,
                    args=tuple(server.args),
                    env=tuple((e.name, e.value) for e in server.env),
                )
            )
    return configs


def from_wire_json(servers: list[dict[str, Any]] | None) -> list[McpServerConfig]:
    """The client's list as plain JSON (ACP's models dumped by alias); sse stays unsupported."""
    configs: list[McpServerConfig] = []
    for raw in servers or []:
        if raw.get("type") == "sse":
            configs.append(
                McpServerConfig(name=str(raw.get("name")), transport="sse", url=str(raw.get("url")))
            )
            continue
        raw = {key: value for key, value in raw.items() if key != "_meta"}
        try:
            if raw.get("type") == "http":
                headers = [{"name": h.get("name"), "value": h.get("value")} for h in raw.get("headers") or []]
                configs += from_wire([m.McpServerHttp.model_validate({**raw, "headers": headers})])
            else:
                env = [{"name": e.get("name"), "value": e.get("value")} for e in raw.get("env") or []]
                configs += from_wire([m.McpServerStdio.model_validate({**raw, "type": None, "env": env})])
        except ValidationError as exc:
            logger.warning("ignoring MCP server %s: %s", raw.get("name"), describe(exc))
    return configs


def config_paths(home: Path, cwd: Path) -> list[Path]:
    """The files in precedence order, lowest first."""
    return [home / "settings.json", cwd / ".mcp.json", cwd / ".rpc-agent" / "settings.json"]


def load_file_settings(paths: list[Path]) -> McpSettings:
    """The servers and the start-up timeout from the files (later files win)."""
    settings = McpSettings()
    files = read_each(
        paths,
        lambda data: _File.model_validate(json.loads(data)),
        error=McpConfigError,
        unreadable="cannot read {path}",
        invalid="invalid MCP settings in {path}",
    )
    for position, parsed in files:
        path = paths[position]
        for name, entry in parsed.mcpServers.items():
            if entry.disabled:
                settings.servers.pop(name, None)
                continue
            settings.servers[name] = _from_file_entry(name, entry, path)
        if parsed.mcpStartupTimeoutMs is not None:
            settings.startup_timeout = parsed.mcpStartupTimeoutMs / 1000
    return settings


def merge(files: dict[str, McpServerConfig], client: list[McpServerConfig]) -> list[McpServerConfig]:
    """The client's servers replace same-named ones from the files; file order first."""
    merged = dict(files)
    for config in client:
        merged[config.name] = config
    return list(merged.values())
