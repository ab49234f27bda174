from __future__ import annotations

from pathlib import Path

import pytest

from rpc_agent.tools.base import ToolContext, ToolOutput
from tools.helpers import text_of


class Updates:
    """Records the partial outputs a tool reports."""

    def __init__(self) -> None:
        self.outputs: list[ToolOutput] = []

    def __call__(self, output: ToolOutput) -> None:
        self.outputs.append(output)

    @property
    def texts(self) -> list[str]:
        return [text_of(output) for output in self.outputs]


@pytest.fixture
def updates() -> Updates:
    return Updates()


@pytest.fixture
def ctx(tmp_path: Path, updates: Updates) -> ToolContext:
    return ToolContext(cwd=tmp_path, tool_call_id="call-1", on_update=updates)
