"""``export_html`` over the wire: the page holds the whole tree, not just the current branch."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from e2e.conftest import E2E
from e2e.test_tree import prompt_ids

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]

DATA = re.compile(r'<script id="session-data" type="application/json">(.*?)</script>', re.S)


async def test_export_html_writes_every_branch_with_the_leaf_and_labels(e2e: E2E) -> None:
    async with e2e.server() as client:
        u1, a1 = await prompt_ids(client, "first")
        _, a2 = await prompt_ids(client, "second")
        await client.navigate_tree(a1)
        _, a3 = await prompt_ids(client, "second, differently")
        await client.call("set_label", {"entryId": a2, "label": "old way"})
        default = Path((await client.call("export_html"))["path"])
        chosen = Path((await client.call("export_html", {"outputPath": str(e2e.root / "out.html")}))["path"])
        state = await client.get_state()

    assert state.sessionFile is not None
    assert default == Path(state.sessionFile).with_suffix(".html")
    assert chosen == e2e.root / "out.html"
    for page in (default.read_text(encoding="utf-8"), chosen.read_text(encoding="utf-8")):
        match = DATA.search(page)
        assert match is not None
        data = json.loads(match.group(1))
        assert data["leafId"] == a3
        nodes = {n["entry"]["id"]: n for n in data["nodes"]}
        assert {u1, a1, a2, a3} <= set(nodes)
        assert nodes[a2]["label"] == "old way"
        assert "Echo: second" in json.dumps(nodes[a2]["entry"])  # the branch left behind is there too
