"""``rpc-agent --acp`` driven by the official TypeScript SDK 2.4.0 (``tests/acp/ts/harness.mjs``),
which parses everything the agent sends with the current stable schema: request cancellation
with the SDK's own ``cancellationSignal``, ``logout``, ``usage_update``, ``session_info_update``,
``additionalDirectories`` and ``session/delete``, as a current editor sees them.

Skipped, with the command to run, when the SDK is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acp_schema import SDK_DIR

HARNESS = Path(__file__).parent / "ts" / "harness.mjs"


def test_a_current_editor_cancels_deletes_logs_out_and_sees_usage_titles_and_roots(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not SDK_DIR.is_dir():
        pytest.skip("the ACP TypeScript SDK is not installed: run `npm ci` in tests/acp/ts")
    home, cwd, extra = tmp_path / "home", tmp_path / "project", tmp_path / "shared"
    cwd.mkdir()
    extra.mkdir()
    slow = " ".join(f"word{i}" for i in range(300))
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps([{"text": slow, "delayMs": 30}, {"text": "Answered.", "usage": {"costUsd": 0.5}}])
    )
    config = tmp_path / "config.json"
    command = [sys.executable, "-m", "rpc_agent", "--acp", "--provider", "faux", "--faux-script", str(script)]
    config.write_text(json.dumps({"command": command, "cwd": str(cwd), "extraDir": str(extra)}))
    env = {"PATH": os.environ.get("PATH", ""), "RPC_AGENT_HOME": str(home)}
    done = subprocess.run(
        [node, str(HARNESS), str(config)], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["errors"] == [], report["errors"]
    assert "Traceback" not in done.stderr
    assert "Method not found" not in done.stderr

    init = report["initialize"]
    assert init["authMethods"] == []  # the faux provider needs no key (test_acp_login has the methods)
    assert init["agentCapabilities"]["auth"] == {"logout": {}}
    assert init["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"] == {}

    assert report["cancelled"] == {"stopReason": "cancelled"}
    assert report["done"] == {"stopReason": "end_turn"}
    assert report["titles"] == ["talk slowly"]
    usage = report["usage"]
    assert usage["size"] == 200_000
    assert usage["used"] > 0
    assert usage["cost"] == {"amount": 0.5, "currency": "USD"}
    (listed,) = report["list"]["sessions"]
    assert (listed["sessionId"], listed["cwd"], listed["additionalDirectories"]) == (
        report["sessionId"],
        str(extra),
        [str(extra)],
    )
    assert init["agentCapabilities"]["sessionCapabilities"]["delete"] == {}
    assert report["deleteOpen"] == {"code": -32600}  # open on this connection: close it first
    assert report["deleted"] == {}
    assert report["listAfterDelete"] == [report["sessionId"]]
    assert not [path for path in home.rglob("*.jsonl") if report["deletedId"] in path.name]
    assert report["logout"] == {
        "_meta": {"rpc-agent": {"removedStoredKey": False, "keyInEnvironment": False}}
    }
    assert report["updates"]["usage_update"] >= 3
