"""Outcomes to response objects and their bytes: success and error shapes, results in wire
shape, and big results written in pieces.

The response objects are built here, as the two dict shapes the spec gives, and not with
jsonrpcserver: importing it (its ``__init__`` loads jsonschema, http.server and oslash) costs
more start-up than the server's whole budget from spawn to the ``initialize`` response. The
README gives the measurements.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Protocol

import anyio
import anyio.lowlevel
import orjson
from pydantic import BaseModel

from rpc_agent.quoting import bound, quote, shorten
from rpc_agent.server.errors import CANCELLED, INTERNAL_ERROR, RpcError

logger = logging.getLogger(__name__)

JsonObject = dict[str, Any]

_ERROR_TEXT_LIMIT = 4096
"""Characters of any one string in an error answer: a net under the sites that quote input."""
_SLICE_ITEMS = 512
"""Items of a result's list encoded at a time when the list is longer: between two slices the
loop answers other requests, so a 100,000-entry ``get_entries`` never holds up ``get_state``."""


class LineSink(Protocol):
    """Where the router puts its output: one complete JSON line (ending in LF) per call.

    A sink may also offer ``write_parts(parts)``: one line given as consecutive pieces (the
    last ending in LF), so that a huge response is never joined into one buffer; the router
    joins the pieces itself for a sink without it.
    """

    def write_line(self, line: bytes) -> None: ...


_RAW_PIECE_BYTES = 1 << 20
"""Raw JSON this long is handed to the writer as it is, not copied into the response."""
_big_raw: dict[int, tuple[orjson.Fragment, list[bytes]]] = {}
"""The bytes behind the big RawJson values not yet sent, by the fragment's id (a few at most)."""
_BIG_RAW_KEPT = 2


def RawJson(data: bytes | str | list[bytes]) -> orjson.Fragment:
    """JSON that is already encoded, anywhere in a result: written into the response as it is.

    A handler that holds stored JSON (a session's message lines) returns it wrapped in RawJson
    instead of parsing it only to encode it again; the bytes must be one valid JSON value, or
    a list of pieces that joined are one.

    An ``orjson.Fragment`` does not give its bytes back, and copying 75 MB into a response
    holds the GIL for a tenth of a second: for a big one the router keeps the bytes aside
    (the same object, not a copy) and writes them between the response's other pieces. Pieces
    are never joined on that path (``_joined`` joins them for a response encoded at once).
    """
    pieces: list[bytes] | None = None
    if type(data) is list:
        if sum(map(len, data)) <= _RAW_PIECE_BYTES:
            data = b"".join(data)
        else:
            pieces = data
    elif type(data) is bytes and len(data) > _RAW_PIECE_BYTES:
        pieces = [data]
    if pieces is None:
        return orjson.Fragment(data)
    fragment = orjson.Fragment(pieces[0] if len(pieces) == 1 else b"null")  # null: see _joined
    while len(_big_raw) >= _BIG_RAW_KEPT:  # never sent (a cancelled request)
        _big_raw.pop(next(iter(_big_raw)))
    _big_raw[id(fragment)] = (fragment, pieces)
    return fragment


def _raw_pieces(value: Any) -> list[bytes] | None:
    """The pieces of a big RawJson value; None for anything else."""
    if type(value) is not orjson.Fragment:
        return None
    kept = _big_raw.get(id(value))
    if kept is None or kept[0] is not value:
        return None
    return kept[1]


def _joined(payload: Any) -> Any:
    """The payload with its big RawJson values whole again and out of the side table: for a
    response encoded at once (a batch item), which orjson writes from the fragments alone."""
    if not _big_raw or type(payload) is not dict:
        return payload
    joined = dict(payload)
    for key, value in payload.items():
        pieces = _raw_pieces(value)
        if pieces is not None:
            del _big_raw[id(value)]
            joined[key] = value if len(pieces) == 1 else orjson.Fragment(b"".join(pieces))
    return joined


def success_response(request_id: Any, payload: Any) -> JsonObject:
    return {"jsonrpc": "2.0", "result": _joined(payload), "id": request_id}


def error_response(request_id: Any, error: RpcError) -> JsonObject:
    body: JsonObject = {"code": error.code, "message": shorten(error.message, _ERROR_TEXT_LIMIT)}
    if error.data is not None:
        body["data"] = bound(error.data, _ERROR_TEXT_LIMIT)
    return {"jsonrpc": "2.0", "error": body, "id": request_id}


def dump_result(method: str, value: Any) -> Any:
    if isinstance(value, BaseModel):
        # warnings=False: results built with ``protocol.base.trusted`` hold the store's plain
        # dicts where the model declares submodels; they are already in wire shape.
        return value.model_dump(mode="json", by_alias=True, exclude_none=False, warnings=False)
    if value is None:
        return {}
    if isinstance(value, dict | orjson.Fragment):
        # A hot handler (get_state) may return its result already in wire shape; the
        # registered result model still documents it.
        return value
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()  # no "never awaited" warning on top of the real error
        raise TypeError(f"inline handler of {method} returned an awaitable; register it without inline=True")
    raise TypeError(f"handler of {method} returned {type(value).__name__}, not a pydantic model or a dict")


def encode_reply(reply: JsonObject) -> bytes:
    """One response object as JSON (no newline); never raises."""
    try:
        return orjson.dumps(reply)
    except TypeError as exc:  # orjson.JSONEncodeError
        problem = exc
    if "error" in reply:
        try:  # error data may hold exceptions and the like (pydantic's ctx): send their str
            return orjson.dumps(reply, default=str)
        except TypeError as exc:
            problem = exc
    logger.error("cannot encode the response to id %s: %s", quote(reply.get("id")), problem)
    fallback = RpcError(
        INTERNAL_ERROR, f"Internal error: the response could not be encoded as JSON: {problem}"
    )
    return orjson.dumps(error_response(reply.get("id"), fallback))


async def encode_in_slices(request_id: Any, payload: Any) -> list[bytes] | None:
    """A success response as pieces of one line, its long lists encoded a slice at a time with
    a checkpoint between slices; None when the result has no long list (or cannot be encoded
    this way: the caller's one-shot path then reports the problem).

    Encoding a big result at once (tens of megabytes of stored message bytes) holds the loop,
    and the GIL, for a tenth of a second or more; in slices the reading loop answers the
    requests that arrive meanwhile, and their answers go out before this one.
    """
    if type(payload) is not dict or not any(
        (type(value) is list and len(value) > _SLICE_ITEMS) or id(value) in _big_raw
        for value in payload.values()
    ):
        return None
    try:
        parts = [b'{"jsonrpc":"2.0","result":{']
        for index, (key, value) in enumerate(payload.items()):
            head = orjson.dumps(key) + b":"
            parts.append(b"," + head if index else head)
            raw = _raw_pieces(value)
            if raw is not None:
                parts.extend(raw)
                continue
            if type(value) is not list or len(value) <= _SLICE_ITEMS:
                parts.append(orjson.dumps(value))
                continue
            for start in range(0, len(value), _SLICE_ITEMS):
                await anyio.lowlevel.checkpoint()
                piece = orjson.dumps(value[start : start + _SLICE_ITEMS])
                opening = b"[" if start == 0 else b","
                closing = b"]" if start + _SLICE_ITEMS >= len(value) else b""
                parts.append(opening + piece[1:-1] + closing)
        parts.append(b'},"id":' + orjson.dumps(request_id) + b"}\n")
    except TypeError:  # orjson.JSONEncodeError
        return None
    for value in payload.values():  # sent: let go of the pieces
        if _raw_pieces(value) is not None:
            del _big_raw[id(value)]
    return parts


def cancelled_error(method: str, reason: str) -> RpcError:
    return RpcError(CANCELLED, f"{method} was cancelled: {reason or 'cancelled'}")


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
