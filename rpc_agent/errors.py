"""The errors rpc-agent raises on purpose, in one hierarchy.

Every front (JSON-RPC, ACP, the headless mode) maps them by ``kind`` alone, which names the
entry of the protocol's error table (``rpc_agent.protocol.errors.ERROR_CODES``) that describes
it; ``data()`` is what a client may act on. Anything else that escapes a handler is a bug of
ours and reaches the client as an internal error, never as a fault of its request.

    AgentError
    ├── InvalidRequestError        the request makes no sense in this state (INVALID_PARAMS)
    │   └── SettingsError          a settings file or flag is invalid
    ├── AgentBusyError             a run is going; queue or abort first (AGENT_BUSY)
    ├── NotAvailableError          the method exists, its machinery is not set up (NOT_AVAILABLE)
    ├── OperationCancelledError    aborted before it finished (CANCELLED)
    ├── NothingToCompactError      the branch already fits (NOTHING_TO_COMPACT)
    ├── SessionError
    │   ├── EntryNotFoundError     (ENTRY_NOT_FOUND; also a KeyError)
    │   ├── SessionNotFoundError   (SESSION_NOT_FOUND)
    │   ├── InvalidSessionFileError  not a session: left untouched (INVALID_SESSION_FILE)
    │   ├── SessionLockedError     another process writes it (SESSION_LOCKED)
    │   │   └── LiveSessionError   it is the caller's own live session, not to delete
    │   ├── PersistenceError       a write failed; latched (PERSISTENCE_FAILED)
    │   ├── SessionFileChangedError  replaced or truncated behind our back (PERSISTENCE_FAILED)
    │   └── ProtectedPathError     a write aimed at a session file (INVALID_PARAMS)
    ├── CheckpointError            a checkpoint or file restore failed (CHECKPOINT_FAILED)
    │   ├── NoCheckpointError      the entry has no workspace state (NO_CHECKPOINT)
    │   └── RestoreConflictError   files changed behind the agent; data lists them (RESTORE_CONFLICT)
    ├── ProviderError              a model call failed; retryable/overflow (PROVIDER_ERROR)
    └── ProviderNotConfiguredError no credentials, no SDK: nothing to retry (PROVIDER_NOT_CONFIGURED)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from rpc_agent.quoting import quote, shorten

__all__ = [
    "AgentBusyError",
    "AgentError",
    "CheckpointError",
    "EntryNotFoundError",
    "InvalidRequestError",
    "InvalidSessionFileError",
    "LiveSessionError",
    "NoCheckpointError",
    "NotAvailableError",
    "NothingToCompactError",
    "OperationCancelledError",
    "PersistenceError",
    "ProtectedPathError",
    "ProviderError",
    "ProviderNotConfiguredError",
    "RestoreConflictError",
    "SessionError",
    "SessionFileChangedError",
    "SessionLockedError",
    "SessionNotFoundError",
    "SettingsError",
]


class AgentError(Exception):
    kind: ClassVar[str] = "INTERNAL_ERROR"
    """The name of this error in the protocol's error table."""

    def data(self) -> dict[str, Any] | None:
        """Machine-readable details for the client (None: the message says it all)."""
        return None


class InvalidRequestError(AgentError):
    kind = "INVALID_PARAMS"


class SettingsError(InvalidRequestError):
    """A settings file, flag or policy is invalid: a request naming it gets INVALID_PARAMS."""


class AgentBusyError(AgentError):
    """The agent is streaming and the request needs it idle (or a streamingBehavior)."""

    kind = "AGENT_BUSY"


class NotAvailableError(AgentError):
    kind = "NOT_AVAILABLE"


class OperationCancelledError(AgentError):
    kind = "CANCELLED"


class NothingToCompactError(AgentError):
    """The branch is too short: everything fits in the part that is kept anyway."""

    kind = "NOTHING_TO_COMPACT"


# --- the session store ----------------------------------------------------------------------


class SessionError(AgentError):
    path: str | None = None
    """The session file the error is about (None: not about one file)."""

    def __init__(self, message: str, path: Path | str | None = None) -> None:
        super().__init__(message)
        if path is not None:
            self.path = str(path)

    def data(self) -> dict[str, Any] | None:
        return {"path": self.path}


class EntryNotFoundError(SessionError, KeyError):
    kind = "ENTRY_NOT_FOUND"

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"entry {quote(entry_id)} not found in this session")
        self.entry_id = entry_id

    def __str__(self) -> str:
        return str(self.args[0])

    def data(self) -> dict[str, Any] | None:
        return {"entryId": shorten(self.entry_id)}


class SessionNotFoundError(SessionError):
    kind = "SESSION_NOT_FOUND"

    def __init__(self, path: Path | str) -> None:
        super().__init__(f"session file not found: {shorten(str(path), 1024)}", path)


class InvalidSessionFileError(SessionError):
    kind = "INVALID_SESSION_FILE"

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(
            f"{shorten(str(path), 1024)} is not a session file ({reason}); it was left untouched", path
        )
        self.reason = reason


class SessionLockedError(SessionError):
    kind = "SESSION_LOCKED"

    def __init__(self, path: Path | str, pid: int | None) -> None:
        owner = f"pid {pid}" if pid else "another writer"
        super().__init__(f"session {path} is locked by {owner}", path)
        self.pid = pid

    def data(self) -> dict[str, Any] | None:
        return {"path": self.path, "pid": self.pid}


class LiveSessionError(SessionLockedError):
    """A deletion named the session this server (or this editor connection) is living in."""

    def __init__(self, path: Path | str) -> None:
        SessionError.__init__(
            self, f"session {path} is the live session; switch to another session before deleting it", path
        )
        self.pid = os.getpid()


class PersistenceError(SessionError):
    """A write to the session file failed; latched, so every later operation fails too."""

    kind = "PERSISTENCE_FAILED"

    def __init__(self, path: Path | str, cause: BaseException) -> None:
        super().__init__(f"writing session file {path} failed: {cause}", path)
        self.cause = cause


class SessionFileChangedError(SessionError):
    """The file the write chain appends to is no longer the session's file at its path.

    Somebody replaced, truncated, grew or removed it behind the chain's back; appending on
    would put acknowledged entries where nobody will read them.
    """

    kind = "PERSISTENCE_FAILED"

    def __init__(self, path: Path | str, what: str) -> None:
        super().__init__(
            f"the session file {path} {what} by something other than this session; nothing more "
            "is written to it (reopen the session to go on)",
            path,
        )


class ProtectedPathError(SessionError, ValueError):
    """A write aimed at a session file (or the session store) from outside its write chain."""

    kind = "INVALID_PARAMS"

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"refusing to write {path}: {reason}", path)
        self.reason = reason


# --- checkpoints ------------------------------------------------------------------------------


class CheckpointError(AgentError):
    """Taking a checkpoint or restoring files failed (git, the disk); the message says why."""

    kind = "CHECKPOINT_FAILED"


class NoCheckpointError(CheckpointError):
    """The entry has no workspace state: it is older than checkpoints in this session."""

    kind = "NO_CHECKPOINT"


class RestoreConflictError(CheckpointError):
    """Files changed since the last checkpoint by someone other than the agent: a restore
    would lose those edits, so it is refused unless forced."""

    kind = "RESTORE_CONFLICT"

    def __init__(self, files: list[str], checkpoint_id: str | None) -> None:
        shown = ", ".join(files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
        super().__init__(
            f"{len(files)} file(s) changed since the last checkpoint ({shown}); pass force to restore anyway"
        )
        self.files = files
        self.checkpoint_id = checkpoint_id

    def data(self) -> dict[str, Any] | None:
        return {"files": self.files, "checkpointId": self.checkpoint_id}


# --- model providers ------------------------------------------------------------------------


class ProviderError(AgentError):
    """A failed model call, classified so the loop can decide what to do.

    ``retryable``: overload, rate limit, 5xx, dropped connection. ``overflow``: the prompt is
    larger than the context window (compaction then retry). ``status`` is the HTTP status
    when there was one.
    """

    kind = "PROVIDER_ERROR"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        overflow: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.overflow = overflow
        self.retry_after = retry_after

    def data(self) -> dict[str, Any] | None:
        return {"status": self.status, "retryable": self.retryable, "overflow": self.overflow}


class ProviderNotConfiguredError(AgentError):
    """The provider cannot run at all (no API key, SDK missing): not a failed call, so no retry
    policy applies to it."""

    kind = "PROVIDER_NOT_CONFIGURED"
