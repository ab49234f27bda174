"""The session store's errors; they are defined with every other error in ``rpc_agent.errors``."""

from ..errors import (
    EntryNotFoundError,
    InvalidSessionFileError,
    PersistenceError,
    ProtectedPathError,
    SessionError,
    SessionFileChangedError,
    SessionLockedError,
    SessionNotFoundError,
)

__all__ = [
    "EntryNotFoundError",
    "InvalidSessionFileError",
    "PersistenceError",
    "ProtectedPathError",
    "SessionError",
    "SessionFileChangedError",
    "SessionLockedError",
    "SessionNotFoundError",
]
