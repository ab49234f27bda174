"""What the server loads before its first answer: only what answering needs.

``-X importtime`` makes the interpreter name every module it imports, on stderr, as the import
completes; the server is killed as soon as it has answered ``initialize``, so the list is what
start-up paid for. The heavy libraries behind a feature stay out until the feature is used.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from child_python import run_python

LAZY = (
    "anthropic",  # the SDK: the first call to an Anthropic model, or its warm-up
    "jsonschema",  # client tools: the first client that declares one
    "jsonrpcserver",  # not used by the router (see the README)
    "http.server",
    "mcp",  # the SDK: the first MCP server started
    "acp",  # the ACP front only
    "rpc_agent.acp",
    "rpc_agent.export",  # the page export: the first export_html
    "rpc_agent.store.search",  # the session scanner: the first search_sessions
    "rpc_agent.store.deleting",  # removing a session file and its blobs: the first delete_session
    "rpc_agent.checkpoints",  # the snapshot engine: the first snapshot, restore or deleted session
    "rpc_agent.methods.session_files",  # search_sessions and delete_session: the first of them
    "rpc_agent.agent.deletion",
    "rpc_agent.protocol.finding",  # their params and results (the table names its models)
    "rpc_agent.tools.bash",  # the built-in tools: the first run, or the first client tool declared
    "rpc_agent.tools.edit",
)
NO_MODEL_BUILT = (
    # No pydantic model is built before answering an initialize without params (no flag gives
    # settings, the params are the defaults, the answer is in wire shape): the first build
    # imports pydantic's plugin loader, which imports importlib.metadata and scans every
    # installed package's entry points.
    "pydantic.plugin._loader",
    "importlib.metadata",
)


def _imported_before_the_first_answer(tmp_path: Path, request: dict[str, object]) -> set[str]:
    env = {**os.environ, "RPC_AGENT_HOME": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "rpc_agent", "--provider", "faux", "--no-session"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(orjson.dumps(request) + b"\n")
        process.stdin.flush()
        response = orjson.loads(process.stdout.readline())
    finally:
        process.kill()
        _, stderr = process.communicate(timeout=30)
    assert response["id"] == 1
    assert response["result"]["serverInfo"]["name"] == "rpc-agent"
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "rpc_agent.server.router" in imported  # the listing works
    return imported


def _loaded(imported: set[str], lazy: tuple[str, ...]) -> list[str]:
    return sorted(
        name for name in imported for prefix in lazy if name == prefix or name.startswith(prefix + ".")
    )


def test_the_first_response_does_not_import_the_lazy_libraries(tmp_path: Path) -> None:
    imported = _imported_before_the_first_answer(
        tmp_path, {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    )
    assert _loaded(imported, LAZY + NO_MODEL_BUILT) == []


def test_a_client_declaring_approvals_and_hooks_does_not_import_the_lazy_libraries(tmp_path: Path) -> None:
    """What the Python client sends: its params are validated (a model is built), but the
    built-in tools are not built to check client tools that were not declared."""
    params = {"clientInfo": {"name": "t"}, "capabilities": {"approvals": True, "hooks": ["tool_call"]}}
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    assert _loaded(_imported_before_the_first_answer(tmp_path, request), LAZY) == []


REFUSED_START = """
import contextlib, io, json, os, sys
from rpc_agent import cli
folder = sys.argv[1]
os.mkfifo(os.path.join(folder, "fifo.jsonl"))
told = io.StringIO()
with contextlib.redirect_stderr(told):
    codes = [
        cli.main(["--provider", "faux", "--cwd", os.path.join(folder, "missing")]),
        cli.main(["--provider", "faux", "--cwd", folder, "--session", os.path.join(folder, "fifo.jsonl")]),
        cli.main(["--provider", "faux", "--cwd", folder, "--session", folder]),
    ]
with open(os.path.join(folder, "seen.json"), "w") as seen:
    json.dump([codes, told.getvalue(), sorted(sys.modules)], seen)
"""


def test_a_refused_start_up_loads_none_of_the_agent(tmp_path: Path) -> None:
    """A missing ``--cwd`` and a ``--session`` that is not a regular file are told before the
    agent's modules load (the store still checks the file again when it opens it)."""
    done = run_python(REFUSED_START, tmp_path)
    assert done.returncode == 0, done.stderr
    codes, told, loaded = orjson.loads((tmp_path / "seen.json").read_bytes())
    assert codes == [2, 1, 1]
    assert f"--cwd {tmp_path / 'missing'} does not exist" in told
    assert "it is a FIFO (named pipe), and only a regular file can be a session" in told
    assert "it is a directory, and only a regular file can be a session" in told
    assert not (tmp_path / "fifo.jsonl.lock").exists()
    heavy = ("rpc_agent.runtime", "rpc_agent.agent", "rpc_agent.store", "rpc_agent.server", "pydantic")
    assert [m for m in loaded if m.startswith(heavy)] == []
