"""The usage of the summary calls is stored on the compaction and branch summary entries, as
pi 1.5 stores it, and get_session_stats counts it."""

from __future__ import annotations

import pytest

from e2e.conftest import E2E
from e2e.test_tree import entries_now, prompt_ids

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


async def test_summaries_store_their_usage_and_the_stats_count_it(e2e: E2E) -> None:
    e2e.cwd.joinpath(".rpc-agent").mkdir(exist_ok=True)
    e2e.cwd.joinpath(".rpc-agent", "settings.json").write_text('{"compaction": {"keepRecentTokens": 10}}')
    async with e2e.server() as client:
        _, a1 = await prompt_ids(client, "first")
        await prompt_ids(client, "second")
        before = await client.get_session_stats()
        nav = await client.navigate_tree(a1, summarize=True)
        await prompt_ids(client, "third")
        compacted = await client.compact()
        entries, _ = await entries_now(client)
        stats = await client.get_session_stats()
    summary = next(e for e in entries if e["id"] == nav.summaryEntryId)
    compaction = next(e for e in entries if e["type"] == "compaction")
    assert summary["usage"]["input"] > 0
    assert compacted.usage is not None
    assert compaction["usage"] == compacted.usage.model_dump(mode="json", exclude_none=True)
    answers = [
        e["message"]["usage"]["input"]
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert stats.tokens.input == sum(answers) + summary["usage"]["input"] + compaction["usage"]["input"]
    assert stats.tokens.input > before.tokens.input
