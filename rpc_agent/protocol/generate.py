"""Generate the top-level ``protocol/`` folder from the models.

``python -m rpc_agent.protocol.generate`` writes ``protocol/schema.json`` (JSON Schema of every
method's params and result, every event, every session entry and the error codes) and
``protocol/reference.md`` (the same, readable). ``--check`` exits 1 when the files on disk
differ from a fresh generation; a test runs it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Required, TypedDict

import orjson
from pydantic import BaseModel, RootModel
from pydantic.json_schema import models_json_schema

from rpc_agent.protocol import PROTOCOL_VERSION
from rpc_agent.protocol.entries import AgentMessage, KnownEntry, SessionHeader
from rpc_agent.protocol.events import Event
from rpc_agent.protocol.host import CLIENT_REQUESTS, CancelRequestParams
from rpc_agent.protocol.json_schema import JsonSchema, as_json_schema
from rpc_agent.protocol.table import METHODS, Method

OUTPUT = Path(__file__).resolve().parents[2] / "protocol"


class EventSchema(RootModel[Event]):
    """A server-to-client notification's params (method "event")."""


class EntrySchema(RootModel[KnownEntry]):
    """One line of a session file after the header; unknown types are kept as they are."""


class MessageSchema(RootModel[AgentMessage]):
    """A message as stored and as returned by get_messages."""


class _Request(TypedDict):
    """A method, or a request the server sends the client: its params' and result's ``$ref``."""

    description: str
    params: JsonSchema | None
    result: JsonSchema | None


class _ClientRequest(TypedDict):
    description: str
    params: JsonSchema
    result: JsonSchema


class _Notification(TypedDict, total=False):
    description: str
    params: Required[JsonSchema]


class _ErrorCode(TypedDict):
    code: int
    description: str


ProtocolSchema = TypedDict(
    "ProtocolSchema",
    {
        "$schema": str,
        "title": str,
        "version": str,
        "transport": str,
        "methods": dict[str, _Request],
        "notifications": dict[str, _Notification],
        "clientRequests": dict[str, _ClientRequest],
        "clientNotifications": dict[str, _Notification],
        "sessionFile": dict[str, JsonSchema],
        "errors": dict[str, _ErrorCode],
        "$defs": dict[str, JsonSchema],
    },
)
"""The generated ``protocol/schema.json``: the protocol's methods, events, client requests and
session file lines, each a ``$ref`` into ``$defs``, the JSON Schemas of the models."""


def _method_specs() -> list[Method]:
    return list(METHODS)


def build_schema() -> ProtocolSchema:
    from rpc_agent.protocol.errors import ERROR_CODES

    specs = _method_specs()
    models: list[type[BaseModel]] = [EventSchema, EntrySchema, MessageSchema, SessionHeader]
    for spec in specs:
        for model in (spec.params, spec.result):
            if model is not None and model not in models:
                models.append(model)
    for _name, params_model, result_model, _text in CLIENT_REQUESTS:
        for model in (params_model, result_model, CancelRequestParams):
            if model not in models:
                models.append(model)
    keys, definitions = models_json_schema(
        [(model, "validation") for model in models], ref_template="#/$defs/{model}"
    )

    def ref(model: type[BaseModel]) -> JsonSchema:
        return as_json_schema(keys[(model, "validation")])

    def optional_ref(model: type[BaseModel] | None) -> JsonSchema | None:
        return None if model is None else ref(model)

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "rpc-agent protocol",
        "version": PROTOCOL_VERSION,
        "transport": "JSON-RPC 2.0 over stdio, one JSON value per LF-terminated line",
        "methods": {
            spec.name: {
                "description": spec.description,
                "params": optional_ref(spec.params),
                "result": optional_ref(spec.result),
            }
            for spec in specs
        },
        "notifications": {"event": {"params": ref(EventSchema)}},
        "clientRequests": {
            name: {"description": text, "params": ref(params_model), "result": ref(result_model)}
            for name, params_model, result_model, text in CLIENT_REQUESTS
        },
        "clientNotifications": {
            "$/cancelRequest": {
                "description": "The server gave up on one of its requests (abort or timeout); do not answer it.",
                "params": ref(CancelRequestParams),
            }
        },
        "sessionFile": {
            "header": ref(SessionHeader),
            "entry": ref(EntrySchema),
            "message": ref(MessageSchema),
        },
        "errors": {name: {"code": code, "description": text} for name, (code, text) in ERROR_CODES.items()},
        "$defs": definitions.get("$defs", {}),
    }


def _type_of(prop: JsonSchema) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " | ".join(_type_of(p) for p in prop["anyOf"])
    if "oneOf" in prop:
        return " | ".join(_type_of(p) for p in prop["oneOf"])
    if "enum" in prop:
        return " | ".join(orjson.dumps(v).decode() for v in prop["enum"])
    if "const" in prop:
        return orjson.dumps(prop["const"]).decode()
    kind = prop.get("type", "any")
    if kind == "array":
        return f"{_type_of(prop.get('items', {}))}[]"
    return str(kind)


def _fields_table(schema: ProtocolSchema, name: str | None) -> list[str]:
    if name is None:
        return ["(none)", ""]
    model = schema["$defs"].get(name, {})
    props = model.get("properties", {})
    if not props:
        return [f"`{name}`: {model.get('description', 'an object').strip()}", ""]
    required = set(model.get("required", []))
    lines = [f"`{name}`", "", "| field | type | required | description |", "|---|---|---|---|"]
    for field, prop in props.items():
        description = " ".join(str(prop.get("description", "")).split())
        kind = _type_of(prop).replace("|", "\\|")
        lines.append(f"| `{field}` | {kind} | {'yes' if field in required else 'no'} | {description} |")
    lines.append("")
    return lines


def build_reference(schema: ProtocolSchema) -> str:
    lines = [
        "# rpc-agent protocol reference",
        "",
        "Generated from the pydantic models by `python -m rpc_agent.protocol.generate`; do not edit.",
        "",
        f"Protocol version {schema['version']}. {schema['transport']}. Server-to-client notifications use",
        'method `"event"` with one of the event objects below as params.',
        "",
        "## Methods",
        "",
    ]
    for name, method in schema["methods"].items():
        params = method["params"]["$ref"].rsplit("/", 1)[-1] if method["params"] else None
        result = method["result"]["$ref"].rsplit("/", 1)[-1] if method["result"] else None
        lines += [f"### `{name}`", "", method["description"], "", "Params:", ""]
        lines += _fields_table(schema, params)
        lines += ["Result:", ""]
        lines += _fields_table(schema, result)
    lines += [
        "## Requests the server sends the client",
        "",
        "Only to a client that declared them in `initialize` `capabilities`. The server may give up on",
        "one with the notification `$/cancelRequest {id}`.",
        "",
    ]
    for name, request in schema.get("clientRequests", {}).items():
        params = request["params"]["$ref"].rsplit("/", 1)[-1]
        result = request["result"]["$ref"].rsplit("/", 1)[-1]
        lines += [f"### `{name}`", "", request["description"], "", "Params:", ""]
        lines += _fields_table(schema, params)
        lines += ["Result:", ""]
        lines += _fields_table(schema, result)
    lines += ["## Events", ""]
    union = schema["$defs"]["EventSchema"]
    for option in union.get("oneOf", union.get("anyOf", [])):
        lines += _fields_table(schema, option["$ref"].rsplit("/", 1)[-1])
    lines += ["## Session file lines", "", "The header:", ""]
    lines += _fields_table(schema, "SessionHeader")
    lines += ["Entries (any other `type` is kept verbatim and never reaches the model):", ""]
    entry_union = schema["$defs"]["EntrySchema"]
    for option in entry_union.get("oneOf", entry_union.get("anyOf", [])):
        lines += _fields_table(schema, option["$ref"].rsplit("/", 1)[-1])
    lines += ["## Error codes", "", "| name | code | meaning |", "|---|---|---|"]
    for name, error in schema["errors"].items():
        lines.append(f"| {name} | {error['code']} | {error['description']} |")
    lines.append("")
    return "\n".join(lines)


def render() -> dict[str, bytes]:
    schema = build_schema()
    return {
        "schema.json": orjson.dumps(schema, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n",
        "reference.md": build_reference(schema).encode(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when protocol/ is stale")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    stale = []
    for name, content in render().items():
        target = args.out / name
        current = target.read_bytes() if target.exists() else None
        if current == content:
            continue
        if args.check:
            stale.append(name)
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            print(f"wrote {target}")
    if stale:
        print(
            f"protocol/ is stale ({', '.join(stale)}): run python -m rpc_agent.protocol.generate",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
