"""Before the first stream: where the credentials come from, and the SDK loaded only when it is
first needed (``warm_up`` or a stream), not with the provider module."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fake_anthropic import FakeAnthropic, Reply, Text
from providers.anthropic_testlib import collect, make_request
from rpc_agent.errors import ProviderNotConfiguredError
from rpc_agent.providers.anthropic import AnthropicProvider, warm_up

pytestmark = pytest.mark.anyio


async def test_no_api_key_is_not_configured(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    provider = AnthropicProvider()
    assert not provider.is_configured()
    with pytest.raises(ProviderNotConfiguredError, match="ANTHROPIC_API_KEY"):
        await collect(provider, make_request())
    assert fake.requests == []


async def test_auth_token_and_explicit_key(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
    fake.enqueue(Reply([Text("a")]), Reply([Text("b")]))
    for provider in (AnthropicProvider(), AnthropicProvider(api_key="explicit-key")):
        try:
            await collect(provider, make_request())
        finally:
            await provider.aclose()
    assert [r.headers["authorization"] for r in fake.requests] == [
        "Bearer token-from-env",
        "Bearer explicit-key",
    ]


def test_importing_the_provider_does_not_import_the_sdk() -> None:
    code = (
        "import sys, rpc_agent.providers.anthropic, rpc_agent.providers.convert, rpc_agent.providers.models\n"
        "assert 'anthropic' not in sys.modules, 'SDK imported eagerly'\n"
        "assert 'httpx2' not in sys.modules, 'httpx2 imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


async def test_warm_up_imports_the_sdk() -> None:
    await warm_up()
    assert "anthropic" in sys.modules
