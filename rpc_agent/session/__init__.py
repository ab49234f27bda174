"""The session store: an append-only JSONL tree per conversation, pi-compatible (v3)."""

from rpc_agent.errors import (
    EntryNotFoundError,
    InvalidSessionFileError,
    PersistenceError,
    SessionError,
    SessionLockedError,
    SessionNotFoundError,
)

from ..protocol.methods import SessionInfoModel as SessionInfo
from .context import ModelRef, SessionContext, build_session_context
from .files import LoadReport
from .listing import list_all_sessions, list_sessions
from .store import LEAF_MARKER, PendingAppend, SessionManager
from .tree import TreeNode

__all__ = [
    "LEAF_MARKER",
    "EntryNotFoundError",
    "InvalidSessionFileError",
    "LoadReport",
    "ModelRef",
    "PendingAppend",
    "PersistenceError",
    "SessionContext",
    "SessionError",
    "SessionInfo",
    "SessionLockedError",
    "SessionManager",
    "SessionNotFoundError",
    "TreeNode",
    "build_session_context",
    "list_all_sessions",
    "list_sessions",
]
