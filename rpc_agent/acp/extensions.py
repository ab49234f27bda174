"""Methods of the JSON-RPC table that ACP lacks, served as ACP extension methods.

On the wire they are ``_rpc_agent/<name>`` with the params of the table plus ``sessionId``;
each runs the very handler the JSON-RPC front runs, bound to that session's agent, and its
errors keep their documented codes. The session's lifecycle, prompts and settings stay ACP's own.
"""

from __future__ import annotations

from typing import Any

import orjson

from acp import RequestError
from rpc_agent.acp.session_state import AcpSession
from rpc_agent.methods.errors import map_error

EXTENSION_METHODS = frozenset(
    {
        "get_tree",
        "navigate_tree",
        "set_label",
        "compact",
        "get_entries",
        "get_messages",
        "get_session_stats",
        "export_html",
        "restore_files",
        "get_file_changes",
    }
)


def extension_name(method: str) -> str:
    """The table's name for an extension method (``rpc_agent/<name>``), or method-not-found."""
    prefix, _, name = method.partition("/")
    if prefix != "rpc_agent" or name not in EXTENSION_METHODS:
        raise RequestError.method_not_found(f"_{method}")
    return name


async def call_extension(session: AcpSession, name: str, params: dict[str, Any]) -> dict[str, Any]:
    spec = session.methods.registry.get(name)
    assert spec is not None, name
    rest = {key: value for key, value in params.items() if key != "sessionId"}
    try:
        result = await spec.invoke(rest)
    except Exception as exc:
        mapped = map_error(exc)  # our errors keep their codes; a bug of ours stays internal
        if mapped is None:
            raise
        raise RequestError(mapped.code, mapped.message, mapped.data) from exc
    # Stored JSON sent as it is (orjson fragments) becomes plain data for the SDK's encoder.
    plain: dict[str, Any] = orjson.loads(orjson.dumps(result))
    return plain
