"""The session store: an append-only JSONL tree per conversation, pi-compatible (v3)."""

from rpc_agent.errors import (
    EntryNotFoundError,
    InvalidSessionFileError,
    PersistenceError,
    SessionError,
    SessionLockedError,
    SessionNotFoundError,
)
from rpc_agent.protocol.methods import SessionInfoModel as SessionInfo
from rpc_agent.store.context import ModelRef, SessionContext, build_session_context
from rpc_agent.store.durability import PendingAppend
from rpc_agent.store.files import LoadReport
from rpc_agent.store.index import LEAF_MARKER
from rpc_agent.store.listing import list_all_sessions, list_sessions
from rpc_agent.store.manager import SessionManager
from rpc_agent.store.tree import TreeNode

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
