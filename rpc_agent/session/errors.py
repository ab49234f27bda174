"""Errors the session store raises; the RPC layer maps each class to its own error code."""

from __future__ import annotations

from pathlib import Path


class SessionError(Exception):
    """Base class of session store errors."""


class EntryNotFoundError(SessionError, KeyError):
    def __init__(self, entry_id: str) -> None:
        super().__init__(f"entry {entry_id!r} not found in this session")
        self.entry_id = entry_id

    def __str__(self) -> str:
        return str(self.args[0])


class SessionNotFoundError(SessionError):
    def __init__(self, path: Path | str) -> None:
        super().__init__(f"session file not found: {path}")
        self.path = str(path)


class InvalidSessionFileError(SessionError):
    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path} is not a session file ({reason}); it was left untouched")
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


class SessionFileChangedError(SessionError):
    """The file the write chain appends to is no longer the session's file at its path.

    Somebody replaced, truncated, grew or removed it behind the chain's back; appending on
    would put acknowledged entries where nobody will read them.
    """

    def __init__(self, path: Path | str, what: str) -> None:
        super().__init__(
            f"the session file {path} {what} by something other than this session; nothing more "
            "is written to it (reopen the session to go on)"
        )
        self.path = str(path)


class ProtectedPathError(SessionError, ValueError):
    """A write aimed at a session file (or the session store) from outside its write chain."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"refusing to write {path}: {reason}")
        self.path = str(path)
        self.reason = reason
