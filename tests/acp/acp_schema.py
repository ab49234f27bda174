"""Every message an agent sends, checked against the current stable ACP v1 schema.

The schema is the one bundled in the npm package ``@agentclientprotocol/sdk`` 2.4.0, pinned in
``tests/acp/ts/package-lock.json`` and installed by ``.ci/run`` (``npm ci`` there); the Python
SDK we serve with is generated from an older schema, so passing its models proves less. Tests
that need the schema are skipped, with the command to run, when it is not installed.

``SchemaCheck`` watches a client connection (the SDK's stream observers): requests and
notifications from the agent are checked by their method, answers by the method of the
client's request they answer. Methods the stable schema lacks (``session/fork``, extension
methods) are not checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from jsonschema import Draft202012Validator

JsonDict = dict[str, Any]

SDK_DIR = Path(__file__).parent / "ts" / "node_modules" / "@agentclientprotocol" / "sdk"
SCHEMA_PATH = SDK_DIR / "schema" / "v1" / "schema.json"


@cache
def _schema() -> JsonDict:
    loaded: JsonDict = json.loads(SCHEMA_PATH.read_text())
    return loaded


def current_schema() -> JsonDict:
    """The 2.4.0 schema, or a skip saying how to install it."""
    if not SCHEMA_PATH.is_file():
        pytest.skip("the ACP 2.4.0 schema is not installed: run `npm ci` in tests/acp/ts")
    return _schema()


@cache
def _validator(name: str) -> Draft202012Validator:
    schema = _schema()
    return Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})


def _definition(side: str, method: str, suffix: str) -> str | None:
    for name, definition in _schema()["$defs"].items():
        if (
            definition.get("x-side") == side
            and definition.get("x-method") == method
            and name.endswith(suffix)
        ):
            return str(name)
    return None


def problems_of(name: str, value: Any) -> list[str]:
    """What is wrong with ``value`` as a ``name`` of the schema (none when it validates)."""
    return [
        f"{name}: {error.message[:300]} at {list(error.absolute_path)}"
        for error in _validator(name).iter_errors(value)
    ]


@dataclass
class SchemaCheck:
    """The messages one client connection received from its agent, checked as they come."""

    asked: dict[Any, str] = field(default_factory=dict)
    """Request id -> method, for the client's requests."""
    checked: list[str] = field(default_factory=list)
    """What was checked: the definition names, in order."""
    problems: list[str] = field(default_factory=list)

    def watch(self, conn: ClientSideConnection) -> None:
        current_schema()
        conn._conn.add_observer(self.observe)

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction == StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self.asked[message["id"]] = message["method"]
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._check(_definition("client", method, "Request"), message.get("params"))
            else:
                self._check(_definition("client", method, "Notification"), message.get("params"))
            return
        if "error" in message:
            self._check("Error", message["error"])
            return
        asked = self.asked.pop(message.get("id"), None)
        if asked is not None:
            self._check(_definition("agent", asked, "Response"), message.get("result"))

    def _check(self, name: str | None, value: Any) -> None:
        if name is None:
            return
        self.checked.append(name)
        self.problems += problems_of(name, value)
