"""Where a session was last opened, when that is not where its file says it began.

A session file's header keeps the cwd it was created in, and its file lives in that cwd's
folder of the session store; pi reads both, so neither may change. An editor that loads or
resumes the session in another folder (the project moved, or a worktree of it) must still find
it there with ``session/list``, and an editor with more than one folder open wants the others
(``additionalDirectories``) remembered beside it. That is kept out of the session file, in one
small index per agent home, ``$RPC_AGENT_HOME/workspaces.json``::

    {"<session id>": {"path": "<session file>", "cwd": "<last cwd>", "additionalDirectories": [...]}}

An entry exists only while the session's last workspace differs from its header's cwd alone;
a listing checks that the file is still there with the same id before it trusts an entry, so a
file deleted or moved away leaves nothing wrong behind (only a stale line, dropped at the next
write). Writes replace the file atomically; two agents recording at the same instant may lose
one record (the session is then listed under its header's cwd, as before).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rpc_agent.store.files import read_header

INDEX_FILE = "workspaces.json"


@dataclass(frozen=True, slots=True)
class Workspace:
    path: str
    cwd: str
    additional_directories: tuple[str, ...]

    def covers(self, folder: str) -> bool:
        """Whether a listing filtered by ``folder`` should show the session."""
        return folder == self.cwd or folder in self.additional_directories


class WorkspaceIndex:
    """``workspaces.json`` of one agent home."""

    def __init__(self, home: Path) -> None:
        self.path = home / INDEX_FILE

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def entries(self) -> dict[str, Workspace]:
        """Session id -> its recorded workspace, for the entries that are well formed."""
        found: dict[str, Workspace] = {}
        for session_id, raw in self._read().items():
            if not isinstance(raw, dict):
                continue
            path, cwd, extra = raw.get("path"), raw.get("cwd"), raw.get("additionalDirectories")
            if not isinstance(path, str) or not isinstance(cwd, str):
                continue
            roots = tuple(d for d in extra if isinstance(d, str)) if isinstance(extra, list) else ()
            found[session_id] = Workspace(path, cwd, roots)
        return found

    def live(self, session_id: str, workspace: Workspace) -> bool:
        """The entry still names a session file with that id."""
        header = read_header(Path(workspace.path))
        return header is not None and header.get("id") == session_id

    def record(
        self, session_id: str, path: Path, header_cwd: str, cwd: str, additional_directories: list[str]
    ) -> None:
        """Remember where the session is open now (blocking file work: call it in a thread).

        Nothing is written when nothing changes; an entry that would only repeat the header's
        cwd is removed."""
        data = self._read()
        entry = {"path": str(path), "cwd": cwd, "additionalDirectories": list(additional_directories)}
        if cwd == header_cwd and not additional_directories:
            if session_id not in data:
                return
            del data[session_id]
        elif data.get(session_id) == entry:
            return
        else:
            data[session_id] = entry
        self._write(data)

    def _write(self, data: dict[str, Any]) -> None:
        payload = (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{INDEX_FILE}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            tmp.write_bytes(payload)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
