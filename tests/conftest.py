"""Shared pytest fixtures, and the byte code of what the suite's processes import."""

from __future__ import annotations

import compileall
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPILED = ("rpc_agent", "clients/python/rpc_agent_client", "bench", "tests")
"""The folders whose modules the suite's processes import."""
NOT_COMPILED = re.compile(r"(^|/)(test_[^/]*|conftest)\.py$|/node_modules/")
"""Test modules and conftest files are pytest's to load (rewritten for its asserts)."""


def pytest_configure(config: pytest.Config) -> None:
    """Compile what the suite's processes import, once, before any test runs.

    The suite starts a few hundred Python processes that import the package (servers,
    ``rpc-agent -p`` runs, MCP and test servers). Where the environment forbids writing byte
    code (``PYTHONDONTWRITEBYTECODE``, set on some CI machines; see bench/rpc.py), none of them
    keeps what it compiled, so every one compiles each module that has no current byte code
    again, a large part of a server's start-up. Here each changed module is compiled once per
    run, into the ``__pycache__`` folders any import without that variable writes (and
    .gitignore names); a tree that cannot be written is left as it is. An xdist worker leaves it
    to the controller, which runs this before it starts the workers.
    """
    # pytest keeps the test modules it rewrote (in the same folders) only where byte code may be
    # written; otherwise every run, and every xdist worker, rewrites all of them again, most of
    # a worker's collection. This is the test process, never the library's.
    sys.dont_write_bytecode = False
    if hasattr(config, "workerinput"):
        return
    for folder in COMPILED:
        for path in _modules(ROOT / folder):
            compileall.compile_file(path, quiet=2, rx=NOT_COMPILED)


def _modules(folder: Path) -> Iterator[Path]:
    """The ``.py`` files under ``folder``; the npm folders of the node tests (tens of thousands
    of entries, no Python module the suite imports) are not walked."""
    for parent, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if name not in ("node_modules", "__pycache__")]
        yield from (Path(parent, name) for name in names if name.endswith(".py"))


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
