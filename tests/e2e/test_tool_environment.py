"""What tool processes inherit of the server's environment: no credentials unless passed on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.conftest import E2E, JsonDict, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


KEY = "sk-ant-test-key-6b1f0d"
AUTH = "auth-token-93a2c1"
OTHER = "other-service-token-5e77"
COMMAND = (
    'echo "key=$ANTHROPIC_API_KEY auth=$ANTHROPIC_AUTH_TOKEN other=$OTHER_SERVICE_TOKEN '
    'plain=$PLAIN_SETTING extra=$EXTRA_SETTING"'
)


@pytest.fixture(autouse=True)
def secrets_in_the_server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", AUTH)
    monkeypatch.setenv("OTHER_SERVICE_TOKEN", OTHER)
    monkeypatch.setenv("PLAIN_SETTING", "visible")


async def run_both(e2e: E2E) -> tuple[str, str, bytes]:
    """The model's bash tool and the client's ``bash`` method; returns both outputs and the file."""
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": COMMAND}}]},
        {"text": "ok"},
    ]
    async with e2e.server(script=script) as client:
        result = await client.call("prompt", {"message": "show the environment"})
        tool_result = result["messages"][2]
        assert tool_result["role"] == "toolResult"
        by_method = await client.call("bash", {"command": COMMAND})
        session_file = Path((await client.get_state()).sessionFile or "")
    return text_of(tool_result).strip(), str(by_method["output"]).strip(), session_file.read_bytes()


async def test_tools_do_not_inherit_credentials_by_default(e2e: E2E) -> None:
    by_model, by_client, stored = await run_both(e2e)
    expected = "key= auth= other= plain=visible extra="
    assert (by_model, by_client) == (expected, expected)
    for secret in (KEY, AUTH, OTHER):
        assert secret.encode() not in stored


async def test_the_users_settings_pass_credentials_on(e2e: E2E) -> None:
    policy = {"include": ["ANTHROPIC_API_KEY"], "exclude": ["PLAIN_*"], "set": {"EXTRA_SETTING": "set"}}
    (e2e.home / "settings.json").write_text(json.dumps({"shellEnvironment": policy}))
    by_model, by_client, stored = await run_both(e2e)
    expected = f"key={KEY} auth= other= plain= extra=set"
    assert (by_model, by_client) == (expected, expected)
    assert KEY.encode() in stored
    assert AUTH.encode() not in stored


async def test_a_projects_settings_cannot_pass_credentials_on(e2e: E2E) -> None:
    project_settings = e2e.cwd / ".rpc-agent" / "settings.json"
    project_settings.parent.mkdir()
    project_settings.write_text(json.dumps({"shellEnvironment": {"inherit": "all", "include": ["*"]}}))
    by_model, _by_client, stored = await run_both(e2e)
    assert by_model == "key= auth= other= plain=visible extra="
    assert KEY.encode() not in stored
