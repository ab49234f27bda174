"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (``@pytest.mark.anyio``) run on asyncio only."""
    return "asyncio"


@pytest.fixture(autouse=True)
def agent_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``$RPC_AGENT_HOME`` for every test, so that none touches the real
    ``~/.rpc-agent`` (an AgentSession built without a home keeps its checkpoints there)."""
    home = tmp_path / "agent-home"
    monkeypatch.setenv("RPC_AGENT_HOME", str(home))
    return home
