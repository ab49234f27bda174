"""JSON-RPC error codes: the five of the spec and the application's own, with their meaning.

``ERROR_CODES`` is the single table the protocol reference is generated from; each value is a
``(code, description)`` pair, so ``for name, (code, description) in ERROR_CODES.items()`` works.
"""

from __future__ import annotations

from typing import NamedTuple

# JSON-RPC 2.0 (https://www.jsonrpc.org/specification#error_object)
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# Application codes (the spec reserves -32000..-32099 for implementation-defined server errors)
AGENT_BUSY = -32001
ENTRY_NOT_FOUND = -32002
SESSION_NOT_FOUND = -32003
SESSION_LOCKED = -32004
INVALID_SESSION_FILE = -32005
PERSISTENCE_FAILED = -32006
PROVIDER_NOT_CONFIGURED = -32007
PROVIDER_ERROR = -32008
CANCELLED = -32009
NOT_AVAILABLE = -32010
NOTHING_TO_COMPACT = -32011
CHECKPOINT_FAILED = -32012
NO_CHECKPOINT = -32013
RESTORE_CONFLICT = -32014


class ErrorCode(NamedTuple):
    code: int
    description: str


ERROR_CODES: dict[str, ErrorCode] = {
    "PARSE_ERROR": ErrorCode(PARSE_ERROR, "The line is not valid JSON (the response's id is null)."),
    "INVALID_REQUEST": ErrorCode(
        INVALID_REQUEST,
        "Not a JSON-RPC 2.0 request object: bad or missing jsonrpc, method or id; empty batch.",
    ),
    "METHOD_NOT_FOUND": ErrorCode(METHOD_NOT_FOUND, "No such method; the message names it."),
    "INVALID_PARAMS": ErrorCode(
        INVALID_PARAMS, "Params are not an object/array or fail validation; data lists pydantic's errors."
    ),
    "INTERNAL_ERROR": ErrorCode(
        INTERNAL_ERROR, "Unexpected server-side failure; the message says what happened (details on stderr)."
    ),
    "AGENT_BUSY": ErrorCode(
        AGENT_BUSY, "The agent is running; send steer/followUp (or a streamingBehavior) or abort first."
    ),
    "ENTRY_NOT_FOUND": ErrorCode(ENTRY_NOT_FOUND, "No entry with that id in the current session."),
    "SESSION_NOT_FOUND": ErrorCode(SESSION_NOT_FOUND, "The session file does not exist."),
    "SESSION_LOCKED": ErrorCode(SESSION_LOCKED, "Another process holds the session file's lock."),
    "INVALID_SESSION_FILE": ErrorCode(
        INVALID_SESSION_FILE, "The file is not a session file; it was left untouched."
    ),
    "PERSISTENCE_FAILED": ErrorCode(
        PERSISTENCE_FAILED, "Writing the session file failed; later writes fail too until it is reopened."
    ),
    "PROVIDER_NOT_CONFIGURED": ErrorCode(
        PROVIDER_NOT_CONFIGURED, "The model provider is missing its configuration (for example an API key)."
    ),
    "PROVIDER_ERROR": ErrorCode(
        PROVIDER_ERROR, "The model provider failed; data says whether it is retryable."
    ),
    "CANCELLED": ErrorCode(
        CANCELLED, "The operation was aborted or the server shut down before it finished."
    ),
    "NOT_AVAILABLE": ErrorCode(
        NOT_AVAILABLE, "The method exists but its machinery is not available in this build or setup yet."
    ),
    "NOTHING_TO_COMPACT": ErrorCode(
        NOTHING_TO_COMPACT, "The branch already fits in the part compaction keeps; nothing was changed."
    ),
    "CHECKPOINT_FAILED": ErrorCode(
        CHECKPOINT_FAILED, "A checkpoint or file restore failed (git, a full disk); the message says why."
    ),
    "NO_CHECKPOINT": ErrorCode(
        NO_CHECKPOINT, "The entry has no workspace state (it is older than checkpoints in this session)."
    ),
    "RESTORE_CONFLICT": ErrorCode(
        RESTORE_CONFLICT,
        "Files changed since the last checkpoint by someone else; data.files lists them. Pass force to restore.",
    ),
}
