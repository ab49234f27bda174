"""JSON already encoded, returned by a handler inside its result and written as it is.

The fronts encode results differently: the JSON-RPC front writes a big value's pieces between
its response's other pieces (``server/replies.py``, which reads the side table kept here); ACP's
extension methods hand the value to the SDK's encoder.
"""

from __future__ import annotations

from typing import Any

import orjson

_RAW_PIECE_BYTES = 1 << 20
"""Raw JSON this long is handed to the writer as it is, not copied into the response."""
big_raw: dict[int, tuple[orjson.Fragment, list[bytes]]] = {}
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
    are never joined on that path (``server.replies`` joins them for a response encoded at once).
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
    fragment = orjson.Fragment(pieces[0] if len(pieces) == 1 else b"null")  # null: see server.replies._joined
    while len(big_raw) >= _BIG_RAW_KEPT:  # never sent (a cancelled request)
        big_raw.pop(next(iter(big_raw)))
    big_raw[id(fragment)] = (fragment, pieces)
    return fragment


def raw_pieces(value: Any) -> list[bytes] | None:
    """The pieces of a big RawJson value; None for anything else."""
    if type(value) is not orjson.Fragment:
        return None
    kept = big_raw.get(id(value))
    if kept is None or kept[0] is not value:
        return None
    return kept[1]
