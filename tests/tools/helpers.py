"""Helpers shared by the tool tests."""

from __future__ import annotations

import os
from pathlib import Path

from rpc_agent.tools.base import ToolOutput


def text_of(output: ToolOutput) -> str:
    """The text blocks of a tool result, joined."""
    return "".join(str(block["text"]) for block in output.content if block.get("type") == "text")


def assert_lists(output: ToolOutput, expected: list[str]) -> None:
    """A listing tool's result: exactly ``expected``, one a line in order, and their count."""
    assert text_of(output).splitlines() == expected
    assert output.details["count"] == len(expected)


def pid_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X")
