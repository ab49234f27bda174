"""Opening a session file for a command that only reads it (``rpc-agent export``, ``rewind``):
the two commands must word a missing or broken file the same way and exit with the same code."""

from __future__ import annotations

import sys
from pathlib import Path

from rpc_agent.errors import InvalidSessionFileError, SessionNotFoundError
from rpc_agent.store import files
from rpc_agent.store.manager import SessionManager


def open_for_command(source: Path, command: str) -> SessionManager | None:
    """The session at ``source`` read-only, or None once the reason is on stderr as
    ``rpc-agent COMMAND: ...`` (the caller then exits 1)."""
    try:
        return SessionManager.open_read_only(source, home=files.agent_home())
    except SessionNotFoundError:
        print(f"rpc-agent {command}: no session at {source}", file=sys.stderr)
    except (InvalidSessionFileError, OSError) as exc:
        print(f"rpc-agent {command}: {exc}", file=sys.stderr)
    return None
