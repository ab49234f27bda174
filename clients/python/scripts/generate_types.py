"""Generates ``rpc_agent_client/types.py`` from ``protocol/schema.json``.

    python clients/python/scripts/generate_types.py           write the module
    python clients/python/scripts/generate_types.py --check   exit 1 if the module is stale

The client ships its own pydantic models of the wire so that it depends on no server code: the
schema is the contract, as it is for the TypeScript client. The models come from
datamodel-code-generator; before it runs, pydantic's per-property ``title`` fields are stripped
(they carry nothing a reader needs) and the ``$defs`` are gathered under one root so that every
model is emitted. Field names stay as they are on the wire (camelCase).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
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


def generator_input(schema: dict[str, Any]) -> dict[str, Any]:
    definitions = {name: _strip_titles(model, keep=True) for name, model in schema["$defs"].items()}
    return {
        "$defs": definitions,
        "title": "Protocol",
        "type": "object",
        "properties": {name: {"$ref": f"#/$defs/{name}"} for name in definitions},
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
