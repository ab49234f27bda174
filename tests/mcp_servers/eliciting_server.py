"""An MCP server over stdio whose tools ask the user through elicitation.

The few requests a client makes are answered by hand, without the SDK (it takes most of a
second to import, and the tests start this server for nearly every test of theirs);
``eliciting_sdk_server.py`` serves the same tools with the SDK's FastMCP, so that what the SDK
itself sends is what our client is held to (one test's worth).

Tools: ``ask_profile`` (form mode: a name and a favourite language), ``ask_password`` (form
mode asking for a password, which an ACP client must never be shown), ``connect_account``
(URL mode). Each returns, as text, what came back: ``accept {...}``, ``decline`` or ``cancel``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if __name__ == "__main__":  # a script: the tests' folder is where its sibling is found
    sys.path.insert(0, str(Path(__file__).parents[1]))

from mcp_servers.by_hand import JsonDict, handshake, no_method

PROFILE: JsonDict = {
    "properties": {
        "name": {"description": "Your name", "title": "Name", "type": "string"},
        "language": {
            "description": "Favourite language",
            "enum": ["python", "rust", "go"],
            "title": "Language",
            "type": "string",
        },
    },
    "required": ["name", "language"],
    "title": "Profile",
    "type": "object",
}
"""The form FastMCP makes of the ``Profile`` model below (``sdk`` mode)."""

PASSWORD: JsonDict = {
    "properties": {
        "password": {
            "description": "The database password",
            "format": "password",
            "title": "Password",
            "type": "string",
        }
    },
    "required": ["password"],
    "title": "Password",
    "type": "object",
}

URL = ("Sign in to Example", "https://example.com/connect?e=42", "oauth-42")
"""The URL-mode question: its message, URL and elicitation id."""

TOOLS: dict[str, tuple[str, JsonDict]] = {
    "ask_profile": (
        "Ask the user for their profile",
        {"mode": "form", "message": "Who are you?", "requestedSchema": PROFILE},
    ),
    "ask_password": (
        "Ask the user for the database password",
        {"mode": "form", "message": "The database password, please", "requestedSchema": PASSWORD},
    ),
    "connect_account": (
        "Connect the user's account",
        {"mode": "url", "message": URL[0], "url": URL[1], "elicitationId": URL[2]},
    ),
}


def said(action: object, content: object) -> str:
    """What a tool returns: the action, and an accepted form's content."""
    if action == "accept" and isinstance(content, dict):
        return "accept " + json.dumps(content, sort_keys=True)
    return str(action)


# --- stdio, by hand --------------------------------------------------------------------------------


class Withdrawn(Exception):
    """The client cancelled the call whose question was waiting for its answer."""


def write(message: JsonDict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def ask(call_id: object, params: JsonDict) -> JsonDict:
    """Send ``elicitation/create`` and serve the client until its answer comes."""
    question_id = f"ask-{call_id}"
    write({"id": question_id, "method": "elicitation/create", "params": params})
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == question_id and "method" not in message:
            result: JsonDict = message.get("result") or {"action": "cancel"}
            return result
        if message.get("method") == "notifications/cancelled":
            if (message.get("params") or {}).get("requestId") == call_id:
                raise Withdrawn
            continue
        handle(message)
    raise SystemExit(0)  # the client is gone


def call_tool(call_id: object, name: str) -> JsonDict:
    question = TOOLS[name][1]
    answer = ask(call_id, question)
    action = answer.get("action")
    if question["mode"] == "url" and action == "accept":  # the sign-in "happened": say so
        write({"method": "notifications/elicitation/complete", "params": {"elicitationId": URL[2]}})
    text = said(action, answer.get("content"))
    return {"content": [{"type": "text", "text": text}], "isError": False}


def answer(message: JsonDict) -> JsonDict:
    method, params = message["method"], message.get("params") or {}
    shaken = handshake(method, params, "eliciting-server")
    if shaken is not None:
        return shaken
    if method == "tools/list":
        schema = {"type": "object", "properties": {}}
        return {
            "tools": [
                {"name": name, "description": description, "inputSchema": schema}
                for name, (description, _) in TOOLS.items()
            ]
        }
    if method == "tools/call":
        return call_tool(message["id"], params["name"])
    raise LookupError(method)


def handle(message: JsonDict) -> None:
    if "id" not in message or "method" not in message:
        return  # a notification (initialized, cancelled of a call already over), a stray answer
    try:
        write({"id": message["id"], "result": answer(message)})
    except Withdrawn:
        pass  # a cancelled request is not answered
    except LookupError:
        write({"id": message["id"], "error": no_method(message["method"])})


def serve_stdio() -> None:
    for line in sys.stdin:
        handle(json.loads(line))


if __name__ == "__main__":
    serve_stdio()
