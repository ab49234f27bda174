"""A shape of ``protocol.shapes`` as the type of a pydantic field.

Events and results carry entries, messages and blocks as the store holds them: typed dicts.
Pydantic cannot take those TypedDicts as field types on Python 3.11 (it wants
``typing_extensions.TypedDict``), and if it could it would check and copy every key and publish
every shape's fields in the schema, where the entry schemas already describe them. ``Loose``
keeps both sides as they were: mypy sees the shape, pydantic a JSON object of any keys.
"""

from __future__ import annotations

from typing import Annotated, TypeVar

from pydantic import GetPydanticSchema

from rpc_agent.protocol.base import JsonDict

_Shape = TypeVar("_Shape")

Loose = Annotated[_Shape, GetPydanticSchema(lambda _shape, handler: handler(JsonDict))]
"""``Loose[EntryDict]``: an ``EntryDict`` to mypy; to pydantic (validation, schema) any JSON object."""
