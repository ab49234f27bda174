"""Which MCP servers a session runs: files in precedence order, then the client's list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rpc_agent.mcp.config import (
    McpConfigError,
    McpServerConfig,
    config_paths,
    from_wire_json,
    load_file_settings,
    merge,
)


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_later_files_replace_servers_of_the_same_name_and_the_client_wins(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "project"
    write(
        home / "settings.json", {"mcpServers": {"a": {"command": "global-a"}, "b": {"command": "global-b"}}}
    )
    write(
        cwd / ".mcp.json",
        {
            "mcpServers": {
                "b": {"type": "http", "url": "http://x/mcp", "headers": {"K": "v"}},
                "c": {"command": "c"},
            }
        },
    )
    write(
        cwd / ".rpc-agent" / "settings.json",
        {
            "mcpStartupTimeoutMs": 2500,
            "mcpServers": {"c": {"disabled": True}, "d": {"command": "d", "args": ["1"]}},
        },
    )
    settings = load_file_settings(config_paths(home, cwd))
    assert settings.startup_timeout == 2.5
    assert sorted(settings.servers) == ["a", "b", "d"]
    assert settings.servers["a"].command == "global-a"
    assert settings.servers["b"] == McpServerConfig(
        name="b", transport="http", url="http://x/mcp", headers=(("K", "v"),)
    )
    assert settings.servers["d"].args == ("1",)

    client = from_wire_json(
        [{"name": "a", "command": "editor-a", "args": [], "env": [{"name": "X", "value": "1"}]}]
    )
    merged = {c.name: c for c in merge(settings.servers, client)}
    assert merged["a"].command == "editor-a"
    assert merged["a"].env == (("X", "1"),)


def test_a_broken_file_names_itself(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {"x": {"args": ["no command"]}}})
    with pytest.raises(McpConfigError, match=r"\.mcp\.json"):
        load_file_settings([tmp_path / ".mcp.json"])


def test_client_sse_servers_are_kept_to_be_reported_as_unsupported() -> None:
    (sse,) = from_wire_json([{"type": "sse", "name": "old", "url": "http://x/sse", "headers": []}])
    assert sse.transport == "sse"
