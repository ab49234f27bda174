"""``additionalDirectories`` on the JSON-RPC front: ``initialize`` and ``new_session`` give the
session workspace roots besides its cwd, the model is told of them, and a bad one is refused.
Through the typed Python client, against the fake Messages API."""

from __future__ import annotations

import pytest

from e2e.conftest import E2E, expect_error
from fake_anthropic import FakeAnthropic, Reply, Text

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]

INVALID_PARAMS = -32602
TOLD = "Additional workspace directories (part of this task too; use absolute paths there): "


def system_text(fake: FakeAnthropic, call: int) -> str:
    return " ".join(block["text"] for block in fake.bodies[call]["system"])


async def test_initialize_and_new_session_set_the_roots_the_model_is_told_of(
    e2e: E2E, fake: FakeAnthropic
) -> None:
    first, second = e2e.root / "lib-a", e2e.root / "lib-b"
    first.mkdir()
    second.mkdir()
    fake.enqueue(Reply([Text("one")]), Reply([Text("two")]), Reply([Text("three")]))
    async with e2e.server("--provider", "anthropic", "--model", "claude-haiku-4-5") as client:
        await expect_error(client.initialize(additional_directories=["relative"]), INVALID_PARAMS)
        await client.initialize(additional_directories=[str(first), str(first), str(e2e.cwd)])
        await client.prompt("hello")
        assert TOLD + str(first) in system_text(fake, 0)  # once, without the cwd

        await expect_error(
            client.new_session(additional_directories=[str(e2e.root / "nope")]), INVALID_PARAMS
        )
        await client.new_session(additional_directories=[str(second)])
        await client.prompt("again")
        assert TOLD + str(second) in system_text(fake, 1)
        assert str(first) not in system_text(fake, 1)

        await client.new_session(additional_directories=[])
        await client.prompt("once more")
        assert "Additional workspace directories" not in system_text(fake, 2)
