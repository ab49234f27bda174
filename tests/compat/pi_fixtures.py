"""What the pi 0.73.1 compatibility modules share: node, and one pi reading session files for
the whole run (``pi_context.mjs`` serving paths on its stdin). Fixtures, offered to the tests by
``conftest.py``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from node_reader import NodeReader

COMPAT_DIR = Path(__file__).resolve().parent
PI_PACKAGE_DIR = COMPAT_DIR / "node_modules" / "@mariozechner" / "pi-coding-agent"


@pytest.fixture(scope="session")
def node() -> str:
    """The node binary, once the reference implementation is installed (else the test skips)."""
    if not PI_PACKAGE_DIR.is_dir():
        pytest.skip(
            "the pi coding agent is not installed: run `npm ci` in tests/compat "
            "(cd tests/compat && npm ci --no-audit --no-fund)"
        )
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not on PATH; the pi compatibility tests need node >= 20")
    return found


@pytest.fixture(scope="session")
def pi_reader(node: str) -> Iterator[NodeReader]:
    """pi's context of a session file (``pi_context.mjs``), one node start for every test."""
    reader = NodeReader(node, COMPAT_DIR, "pi_context.mjs")
    try:
        yield reader
    finally:
        reader.close()
