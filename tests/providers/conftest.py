"""Fixtures for the provider tests: the fake Anthropic server and a provider pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from fake_anthropic import FakeAnthropic
from rpc_agent.providers.anthropic import AnthropicProvider


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake server; ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY point at it."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield server


@pytest.fixture
async def provider(fake: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    instance = AnthropicProvider()
    yield instance
    await instance.aclose()
