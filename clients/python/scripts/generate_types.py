"""Generates ``rpc_agent_client/types.py`` from ``protocol/schema.json``.

    python clients/python/scripts/generate_types.py           write the module
    python clients/python/scripts/generate_types.py --check   exit 1 if the module is stale

The client ships its own pydantic models of the wire so that it depends on no server code: the
schema is the contract, as it is for the TypeScript client. The models come from
datamodel-code-generator; before it runs, the schema is adjusted:

- pydantic's per-property ``title`` fields are stripped (they carry nothing a reader needs);
- each model's ``additionalProperties`` becomes its base class (``OpenModel`` keeps unknown
  fields, ``ClosedModel`` rejects them, ``LaxModel`` drops them), so that the policy is written
  once and not in every class;
- the fields that every member of a discriminated union declares alike (the ``id``,
  ``parentId`` and ``timestamp`` of the session entries) move to one base of that union, as
  the server's own models have them;
- a union that pydantic writes out again in every field that holds it (a message, the content
  blocks) becomes one named type alias that the fields refer to;
- ``anyOf: [bounded number, null]`` becomes one nullable type (else the bounded number would
  become a root model of its own, and a field of it would need ``.root``);
- the ``$defs`` are gathered under one root so that every model is emitted.

Field names stay as they are on the wire (camelCase).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCHEMA = HERE.parents[2] / "protocol" / "schema.json"
OUTPUT = HERE.parent / "rpc_agent_client" / "types.py"
PRESET = "standard-py311-20261027"

HEADER = '''"""The wire types of rpc-agent, generated from protocol/schema.json: do not edit.

Regenerate with ``python clients/python/scripts/generate_types.py``.
"""

'''


def _strip_titles(node: Any, *, keep: bool) -> Any:
    if isinstance(node, list):
        return [_strip_titles(item, keep=False) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and not keep:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _strip_titles(schema, keep=False) for name, schema in value.items()}
        elif key in ("discriminator", "default", "examples", "const", "enum"):
            out[key] = value
        else:
            out[key] = _strip_titles(value, keep=False)
    return out


BASES = {True: "OpenModel", False: "ClosedModel", None: "LaxModel"}
"""The base class for each value of ``additionalProperties`` (absent: pydantic's default)."""


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _union_members(union: dict[str, Any]) -> list[str]:
    mapping = union.get("discriminator", {}).get("mapping", {})
    return [ref.rpartition("/")[2] for ref in mapping.values()]


def _shared_fields(definitions: dict[str, Any], members: list[str], tag: str) -> dict[str, Any]:
    """The properties every member declares alike (same schema, same requiredness)."""
    first, *rest = (definitions[name] for name in members)
    shared = {}
    for field, schema in first["properties"].items():
        required = field in first.get("required", ())
        if field != tag and all(
            model["properties"].get(field) == schema and (field in model.get("required", ())) == required
            for model in rest
        ):
            shared[field] = schema
    return shared


def _factor_union(definitions: dict[str, Any], union_name: str) -> None:
    """Moves the fields shared by every member of a union to a base model of their own."""
    members = _union_members(definitions[union_name])
    policies = {definitions[name].get("additionalProperties") for name in members}
    if len(members) < 2 or len(policies) != 1:
        return
    shared = _shared_fields(definitions, members, definitions[union_name]["discriminator"]["propertyName"])
    if not shared:
        return
    base_name = union_name.removesuffix("Schema") + "Base"
    first = definitions[members[0]]
    definitions[base_name] = {
        "title": base_name,
        "type": "object",
        "additionalProperties": policies.pop(),
        "properties": shared,
        "required": [field for field in first.get("required", ()) if field in shared],
    }
    for name in members:
        model = definitions[name]
        model["properties"] = {key: value for key, value in model["properties"].items() if key not in shared}
        model["required"] = [field for field in model.get("required", ()) if field not in shared]
        model.pop("additionalProperties", None)
        model["allOf"] = [_ref(base_name)]


def _base_on_policy(definitions: dict[str, Any]) -> None:
    """Replaces each model's ``additionalProperties`` by a base class that carries it."""
    for model in list(definitions.values()):
        if model.get("type") != "object" or "allOf" in model:
            continue
        model["allOf"] = [_ref(BASES[model.pop("additionalProperties", None)])]
    for policy, name in BASES.items():
        base: dict[str, Any] = {"title": name, "type": "object", "properties": {}}
        if policy is not None:
            base["additionalProperties"] = policy
        definitions[name] = base


def _rewrite(node: Any, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, change) for item in node]
    if not isinstance(node, dict):
        return node
    return change({key: _rewrite(value, change) for key, value in node.items()})


def _union_refs(unions: dict[str, dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A union written out again inside a model becomes a reference to the one definition."""

    def change(node: dict[str, Any]) -> dict[str, Any]:
        for name, union in unions.items():
            if node.get("oneOf") == union["oneOf"] and node.get("discriminator") == union["discriminator"]:
                rest = {key: value for key, value in node.items() if key not in ("oneOf", "discriminator")}
                return {**_ref(name), **rest}
        return node

    return change


UNION_NAMES = {
    frozenset({"TextContent", "ImageContent"}): "UserContent",
    frozenset({"TextContent", "ThinkingContent", "ToolCall"}): "AssistantContent",
}
"""Names for the unions the schema writes inline, as the server's models name them."""


def _named_unions(found: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An inline union that the server names becomes a definition of that name (in ``found``)."""

    def change(node: dict[str, Any]) -> dict[str, Any]:
        members = frozenset(option.get("$ref", "").rpartition("/")[2] for option in node.get("oneOf", ()))
        name = UNION_NAMES.get(members) if "discriminator" in node else None
        if name is None:
            return node
        found[name] = {key: value for key, value in node.items() if key != "description"}
        return {**_ref(name), **({"description": node["description"]} if "description" in node else {})}

    return change


def _nullable_bounds(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [{bounded number}, null]`` as one nullable type, not a model for the number."""
    options = node.get("anyOf")
    if not (isinstance(options, list) and len(options) == 2 and {"type": "null"} in options):
        return node
    (number,) = [option for option in options if option != {"type": "null"}]
    if number.get("type") not in ("integer", "number") or set(number) == {"type"}:
        return node
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    return {**number, **rest, "type": [number["type"], "null"]}


def generator_input(schema: dict[str, Any]) -> dict[str, Any]:
    definitions = {name: _strip_titles(model, keep=True) for name, model in schema["$defs"].items()}
    roots = list(definitions)
    unions = {name: model for name, model in definitions.items() if "discriminator" in model}
    inline: dict[str, Any] = {}
    refer, named = _union_refs(unions), _named_unions(inline)
    for name, model in definitions.items():
        if name not in unions:
            definitions[name] = _rewrite(model, lambda node: named(_nullable_bounds(refer(node))))
    definitions.update(inline)
    for name in unions:
        _factor_union(definitions, name)
    _base_on_policy(definitions)
    return {
        "$defs": definitions,
        "title": "Protocol",
        "type": "object",
        "properties": {name: _ref(name) for name in roots},
    }


def render() -> str:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "protocol.json"
        target = Path(folder) / "types.py"
        source.write_text(json.dumps(generator_input(schema)), encoding="utf-8")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "datamodel_code_generator",
                "--input",
                str(source),
                "--input-file-type",
                "jsonschema",
                "--output",
                str(target),
                "--preset",
                PRESET,
                "--no-snake-case-field",
                "--enum-field-as-literal",
                "all",
                "--disable-timestamp",
                "--class-name",
                "Protocol",
                "--no-allow-population-by-field-name",
                "--use-type-alias",
                "--no-collapse-root-models",
                "--formatters",
                "builtin",
            ],
            check=True,
            capture_output=True,
        )
        body = target.read_text(encoding="utf-8")
    lines = body.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    # The root that gathered the definitions is not a wire type.
    text = "\n".join(lines) + "\n"
    start = text.find("\nclass Protocol(")
    if start != -1:
        end = text.find("\nclass ", start + 1)
        text = text[:start] + ("\n" + text[end:] if end != -1 else "\n")
    return HEADER + text.rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the module is stale")
    args = parser.parse_args(argv)
    content = render()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != content:
            print(f"{OUTPUT} is stale: run python clients/python/scripts/generate_types.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(content, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
