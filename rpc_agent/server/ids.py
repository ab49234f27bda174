"""Request ids: which JSON values are ids, and giving float ids back their exact text.

JSON-RPC asks for the id to be echoed as sent, byte for byte; orjson reads wide integers and
fractions as floats, so those ids are recovered from the line itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

ID_TYPES = frozenset({str, int, float, type(None), orjson.Fragment})  # bool is its own type: not an id
_ID_NUMBER = re.compile(rb'"id"\s*:\s*(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)')
"""An ``"id"`` member with a number value, in raw JSON (the number's exact text in group 1)."""


def restore_exact_ids(line: bytes, message: Any) -> None:
    """Give float ids back their exact JSON text, in place.

    orjson reads integers wider than 64 bits and every fraction as a float, which would come
    back as ``1.2345678901234568e+29`` or ``1.1`` for ``1.10``. JSON-RPC asks for the id to be
    echoed as sent, so such ids are read again from the line with the standard parser, which
    hands over every number's text: the id becomes an ``orjson.Fragment`` written back verbatim.
    Only lines with a float id pay for that, and a single message whose line holds one ``"id"``
    member only for a search of its bytes (a second parse of a huge line would hold up the loop).
    """
    items = message if type(message) is list else [message]
    if not any(type(item) is dict and type(item.get("id")) is float for item in items):
        return
    if type(message) is dict:
        found = _ID_NUMBER.findall(line)
        if len(found) == 1 and float(found[0]) == message["id"]:
            message["id"] = orjson.Fragment(found[0])
            return
    try:
        exact = json.loads(line, parse_float=orjson.Fragment, parse_int=orjson.Fragment)
    except (ValueError, RecursionError):
        return
    exact_items = exact if type(exact) is list else [exact]
    if len(exact_items) != len(items):
        return
    for item, exact_item in zip(items, exact_items, strict=True):
        if type(item) is dict and type(item.get("id")) is float and type(exact_item) is dict:
            item["id"] = exact_item.get("id")
