"""A session's workspace roots besides its cwd (ACP's ``additionalDirectories``).

An editor with several folders open (a monorepo's sibling package, a docs checkout) hands the
agent more than one root; ``cwd`` stays the base of relative paths. The roots live in the
session's settings (``AgentSettings.additional_directories``), where every part that cares
reads them: the system prompt names them so the model looks there, the listing of sessions
reports them, and a sandbox or checkpointing would take them as writable roots too.
"""

from __future__ import annotations

import os

from rpc_agent.errors import InvalidRequestError


def check_directories(paths: list[str], cwd: str) -> list[str]:
    """The roots as given, normalised, without repeats or the cwd itself.

    Each must be an absolute path to an existing folder: ACP requires absolute paths, and a
    root that is not there is a client's mistake better told at once than found by a tool.
    """
    roots: list[str] = []
    for path in paths:
        if not isinstance(path, str) or not os.path.isabs(path):
            raise InvalidRequestError(
                f"additional directories must be absolute paths, got {str(path)[:200]!r}"
            )
        root = os.path.normpath(path)
        if not os.path.isdir(root):
            raise InvalidRequestError(f"additional directory is not a folder: {root[:200]!r}")
        if root != os.path.normpath(cwd) and root not in roots:
            roots.append(root)
    return roots
