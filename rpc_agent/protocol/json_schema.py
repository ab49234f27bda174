"""A JSON Schema as the code holds it: a typed dict of the keywords the code reads or writes.

Schemas pass through the server in several roles (a structured run's output schema, a client
tool's ``parameters``, an MCP tool's input schema, an elicitation's ``requestedSchema``, the
schemas of our own tools, the protocol's generated schema) and the code builds and rewrites
some of them. A schema is not shapeless JSON: typing it lets mypy catch a misspelt keyword
(``"require"``, ``"additionnalProperties"``) or a wrong value type. The dict is ``total=False``
and open to any other keyword at run time (a TypedDict checks nothing at run time); only the
keywords named here can be read or written with a checked type.

Schemas from outside (pydantic's ``model_json_schema()``, an MCP server, a client's params)
become a ``JsonSchema`` once, at that boundary, through :func:`as_json_schema`.
"""

from typing import Any, TypedDict, cast

_Keywords = TypedDict(
    "_Keywords",
    {
        "$ref": str,
        "$defs": "dict[str, JsonSchema]",
        "$schema": str,
        "$id": str,
        "definitions": "dict[str, JsonSchema]",
    },
    total=False,
)


class JsonSchema(_Keywords, total=False):
    """One JSON Schema (or subschema) object; boolean schemas are not used by the code."""

    type: str | list[str]
    title: str
    description: str
    default: Any
    format: str
    enum: list[Any]
    const: Any
    properties: dict[str, "JsonSchema"]
    required: list[str]
    additionalProperties: "bool | JsonSchema"
    items: "JsonSchema"
    anyOf: list["JsonSchema"]
    oneOf: list["JsonSchema"]
    allOf: list["JsonSchema"]


def as_json_schema(value: object, what: str = "a JSON Schema") -> JsonSchema:
    """``value`` as a ``JsonSchema``, checked to be a JSON object (the one boundary check).

    Whether the object is a *valid* schema is the caller's business (jsonschema's
    ``check_schema`` where it matters); here only its kind is checked, so that no list or
    string travels on typed as a schema.
    """
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a JSON object, not {type(value).__name__}")
    return cast(JsonSchema, value)
