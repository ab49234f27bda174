"""Errors the session store raises; the RPC layer maps each class to its own error code."""

from __future__ import annotations

from pathlib import Path

from rpc_agent.quoting import quote, shorten


class SessionError(Exception):
    """Base class of session store errors."""


class EntryNotFoundError(SessionError, KeyError):
    def __init__(self, entry_id: str) -> None:
        super().__init__(f"entry {quote(entry_id)} not found in this session")
        self.entry_id = entry_id

    def __str__(self) -> str:
        return str(self.args[0])


class SessionNotFoundError(SessionError):
    def __init__(self, path: Path | str) -> None:
        super().__init__(f"session file not found: {shorten(str(path), 1024)}")
        self.path = str(path)


class InvalidSessionFileError(SessionError):
    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(
            f"{shorten(str(path), 1024)} is not a session file ({reason}); it was left untouched"
        )
        self.path = str(path)
        self.reason = reason


class SessionLockedError(SessionError):
    def __init__(self, path: Path | str, pid: int | None) -> None:
        owner = f"pid {pid}" if pid else "another writer"
        super().__init__(f"session {path} is locked by {owner}")
        self.path = str(path)
        self.pid = pid


class PersistenceError(SessionError):
    """A write to the session file failed; latched, so every later operation fails too."""

    def __init__(self, path: Path | str, cause: BaseException) -> None:
        super().__init__(f"writing session file {path} failed: {cause}")
        self.path = str(path)
        self.cause = cause
