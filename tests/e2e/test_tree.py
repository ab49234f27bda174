"""The tree over the wire: flat depth-first listing, navigation rules (seed 003), branch
summaries, labels, and unknown ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from e2e.conftest import E2E, WAIT, JsonDict, expect_error, header_and_entries, read_jsonl, text_of
from rpc_agent.server import errors as codes
from rpc_agent_client import RpcAgentClient

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


async def prompt_ids(client: RpcAgentClient, text: str) -> tuple[str, str]:
    """Prompt; the entry ids of the user message and of the (last) answer."""
    mark = len(client.events_seen)
    await client.call("prompt", {"message": text})
    ends = [e for e in client.events_seen[mark:] if e["type"] == "message_end"]
    assert ends[0]["message"]["role"] == "user"
    assert ends[-1]["message"]["role"] == "assistant"
    return ends[0]["entryId"], ends[-1]["entryId"]


async def entries_now(client: RpcAgentClient) -> tuple[list[JsonDict], str | None]:
    got = await client.call("get_entries")
    return got["entries"], got["leafId"]


async def test_tree_listing_and_navigation_rules(e2e: E2E) -> None:
    async with e2e.server() as client:
        u1, a1 = await prompt_ids(client, "first")
        u2, a2 = await prompt_ids(client, "second")

        tree = await client.call("get_tree")
        assert tree["leafId"] == a2
        # The session starts, as pi's do, with its model and thinking level.
        start, nodes = tree["nodes"][:2], tree["nodes"][2:]
        assert [n["type"] for n in start] == ["model_change", "thinking_level_change"]
        m0, t0 = start[0]["id"], start[1]["id"]
        assert [n["id"] for n in nodes] == [u1, a1, u2, a2]
        assert [n["depth"] for n in nodes] == [2, 3, 4, 5]
        assert [n["childCount"] for n in nodes] == [1, 1, 1, 0]
        assert [n["parentId"] for n in nodes] == [t0, u1, a1, u2]
        assert [n["role"] for n in nodes] == ["user", "assistant", "user", "assistant"]
        assert [n["preview"] for n in nodes] == ["first", "Echo: first", "second", "Echo: second"]
        assert all(n["type"] == "message" and n["label"] is None and n["timestamp"] for n in nodes)
        nodes = tree["nodes"]
        compact = await client.get_tree(format="columns")
        assert (compact.nodes, compact.leafId) == ([], a2)
        assert compact.columns is not None
        columns = compact.columns.model_dump()
        assert [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)] == nodes

        # A user message: the leaf goes to its parent and its text comes back for editing.
        mark = len(client.events_seen)
        nav = await client.navigate_tree(u2)
        assert (nav.cancelled, nav.editorText, nav.leafId, nav.summaryEntryId) == (False, "second", a1, None)
        changed = [e for e in client.events_seen[mark:] if e["type"] == "session_changed"]
        assert [(e["reason"], e["leafId"]) for e in changed] == [("navigate", a1)]
        assert (await client.get_state()).leafId == a1
        assert [text_of(m) for m in (await client.call("get_messages"))["messages"]] == [
            "first",
            "Echo: first",
        ]

        # Resubmitting makes a second branch under a1; children are listed oldest first.
        u2b, a2b = await prompt_ids(client, "second, differently")
        nodes = (await client.call("get_tree"))["nodes"]
        assert [(n["id"], n["depth"], n["childCount"]) for n in nodes] == [
            (m0, 0, 1),
            (t0, 1, 1),
            (u1, 2, 1),
            (a1, 3, 2),
            (u2, 4, 1),
            (a2, 5, 0),
            (u2b, 4, 1),
            (a2b, 5, 0),
        ]
        assert nodes[6]["parentId"] == a1

        # Any other entry: the leaf goes to the entry itself, no editor text.
        nav = await client.navigate_tree(a2)
        assert (nav.editorText, nav.leafId) == (None, a2)
        messages = (await client.call("get_messages"))["messages"]
        assert [text_of(m) for m in messages] == ["first", "Echo: first", "second", "Echo: second"]

        # The target is the leaf already: nothing happens, nothing is written.
        before, _ = await entries_now(client)
        mark = len(client.events_seen)
        nav = await client.navigate_tree(a2)
        assert (nav.cancelled, nav.editorText, nav.leafId) == (False, None, a2)
        after, leaf = await entries_now(client)
        assert after == before
        assert leaf == a2
        assert not [e for e in client.events_seen[mark:] if e["type"] == "session_changed"]

        # The first user message: the leaf goes to the session's start, the context is empty.
        mark = len(client.events_seen)
        nav = await client.navigate_tree(u1)
        assert (nav.editorText, nav.leafId) == ("first", t0)
        assert (await client.get_state()).leafId == t0
        assert (await client.call("get_messages"))["messages"] == []
        changed = [e for e in client.events_seen[mark:] if e["type"] == "session_changed"]
        assert changed[-1]["leafId"] == t0
        # Starting again from there makes a second branch of the start.
        u_new, _ = await prompt_ids(client, "from scratch")
        under_start = [n for n in (await client.call("get_tree"))["nodes"] if n["parentId"] == t0]
        assert [n["id"] for n in under_start] == [u1, u_new]
        # The root itself: the leaf is reset, as before any entry.
        nav = await client.navigate_tree(m0)
        assert nav.leafId == m0

        # Leaf moves are in the file: the leaf markers never show in the tree.
        state = await client.get_state()
        assert state.sessionFile is not None
        _, entries = header_and_entries(Path(state.sessionFile))
        ids_in_tree = {n["id"] for n in (await client.call("get_tree"))["nodes"]}
        hidden = [e for e in entries if e["id"] not in ids_in_tree]
        assert hidden
        assert all(e["type"] == "custom" for e in hidden)


async def test_labels_set_and_clear(e2e: E2E) -> None:
    async with e2e.server() as client:
        u1, a1 = await prompt_ids(client, "first")
        labelled = await client.set_label(a1, "checkpoint")
        tree = (await client.call("get_tree"))["nodes"]
        assert [n["label"] for n in tree if n["id"] == a1] == ["checkpoint"]
        assert labelled.labelEntryId not in {n["id"] for n in tree if n["type"] == "message"}
        await client.set_label(u1, "start")
        await client.set_label(a1, None)
        tree = (await client.call("get_tree"))["nodes"]
        labels = {n["id"]: n["label"] for n in tree}
        assert labels[a1] is None
        assert labels[u1] == "start"
        entries, _ = await entries_now(client)
        label_entries = [e for e in entries if e["type"] == "label"]
        assert [(e["targetId"], e.get("label")) for e in label_entries] == [
            (a1, "checkpoint"),
            (u1, "start"),
            (a1, None),
        ]
        # Labels do not reach the model.
        assert [m["role"] for m in (await client.call("get_messages"))["messages"]] == ["user", "assistant"]


async def test_unknown_entry_ids_are_entry_not_found_with_the_id(e2e: E2E) -> None:
    async with e2e.server() as client:
        await prompt_ids(client, "first")
        before = await entries_now(client)
        calls: list[tuple[str, JsonDict]] = [
            ("navigate_tree", {"targetId": "deadbeef"}),
            ("navigate_tree", {"targetId": "deadbeef", "summarize": True}),
            ("set_label", {"entryId": "deadbeef", "label": "x"}),
            ("fork", {"entryId": "deadbeef"}),
            ("get_entries", {"since": "deadbeef"}),
        ]
        for method, params in calls:
            error = await expect_error(client.call(method, params), codes.ENTRY_NOT_FOUND)
            assert error.data == {"entryId": "deadbeef"}, method
            assert "deadbeef" in error.message
        assert await entries_now(client) == before


async def test_navigate_with_branch_summary_and_a_failed_summary(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"text": "answer one"},
        {"text": "answer two"},
        {
            "toolCalls": [
                {"name": "write", "arguments": {"path": "b.txt", "content": "b"}},
                {"name": "read", "arguments": {"path": "b.txt"}},
            ]
        },
        {"text": "wrote b"},
        {"error": "the summarizer is down"},  # the first summary call fails
    ]
    async with e2e.server(script=script) as client:
        u1, a1 = await prompt_ids(client, "first")
        u2, a2 = await prompt_ids(client, "second")
        await client.navigate_tree(u2)
        _, a2b = await prompt_ids(client, "try b")

        state = await client.get_state()
        assert state.sessionFile is not None
        session_file = Path(state.sessionFile)
        file_before = session_file.read_bytes()
        before = await entries_now(client)
        error = await expect_error(
            client.call("navigate_tree", {"targetId": a2, "summarize": True, "label": "explored-b"}),
            codes.PROVIDER_ERROR,
        )
        assert "the summarizer is down" in error.message
        assert await entries_now(client) == before
        assert (await client.get_state()).leafId == a2b
        assert session_file.read_bytes() == file_before

        # The script is used up: the faux provider now writes its deterministic summary.
        mark = len(client.events_seen)
        nav = await client.navigate_tree(
            a2, summarize=True, custom_instructions="focus on b", label="explored-b"
        )
        assert nav.cancelled is False
        assert nav.editorText is None
        assert nav.summaryEntryId is not None
        assert nav.leafId == nav.summaryEntryId
        entries, leaf = await entries_now(client)
        summary = next(e for e in entries if e["id"] == nav.summaryEntryId)
        assert summary["type"] == "branch_summary"
        assert summary["parentId"] == a2
        assert summary["fromId"] == a2
        assert summary["details"]["fromLeafId"] == a2b
        assert summary["details"]["modifiedFiles"] == ["b.txt"]
        assert summary["details"]["readFiles"] == []
        assert summary["summary"].startswith("The user explored a different conversation branch")
        assert "## Goal" in summary["summary"]
        assert "try b" in summary["summary"]  # the abandoned path's first request
        label = next(n for n in (await client.call("get_tree"))["nodes"] if n["id"] == nav.summaryEntryId)
        assert label["label"] == "explored-b"
        assert label["type"] == "branch_summary"
        messages = (await client.call("get_messages"))["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "branchSummary"]
        assert messages[-1]["fromId"] == a2
        changed = [e for e in client.events_seen[mark:] if e["type"] == "session_changed"]
        assert changed[-1]["leafId"] == nav.summaryEntryId

        # Summarizing back to the first user message: the summary hangs under the session's
        # start (its model and thinking level), where pi puts it too.
        nav = await client.navigate_tree(u1, summarize=True)
        assert nav.editorText == "first"
        entries, leaf = await entries_now(client)
        start = next(e for e in entries if e["id"] == u1)["parentId"]
        assert next(e for e in entries if e["id"] == start)["type"] == "thinking_level_change"
        root_summary = next(e for e in entries if e["id"] == nav.summaryEntryId)
        assert root_summary["parentId"] == start
        assert root_summary["fromId"] == start
        assert leaf == nav.summaryEntryId

        # Navigating with a label but no summary labels the target itself.
        nav = await client.navigate_tree(a1, label="back-at-a1")
        assert nav.leafId == a1
        labels = {n["id"]: n["label"] for n in (await client.call("get_tree"))["nodes"]}
        assert labels[a1] == "back-at-a1"

    # Everything the server wrote is valid JSONL with unique ids.
    lines = read_jsonl(session_file)
    ids = [line["id"] for line in lines[1:]]
    assert len(ids) == len(set(ids))


async def test_nothing_else_runs_while_a_branch_summary_is_written(e2e: E2E) -> None:
    slow_summary: JsonDict = {"text": " ".join(["summary"] * 40), "delayMs": 400}
    script: list[JsonDict] = [{"text": "one"}, {"text": "two"}, slow_summary]
    async with e2e.server(script=script) as client:
        _, a1 = await prompt_ids(client, "first")
        await prompt_ids(client, "second")
        before = await entries_now(client)
        # Written from this task, so it is on the pipe before every request below.
        params = {"targetId": a1, "summarize": True}
        request = {"jsonrpc": "2.0", "id": "nav", "method": "navigate_tree", "params": params}
        await client.send_raw(orjson.dumps(request) + b"\n")
        await expect_error(client.call("prompt", {"message": "meanwhile"}), codes.AGENT_BUSY)
        queued = client.call("prompt", {"message": "later", "streamingBehavior": "followUp"})
        await expect_error(queued, codes.AGENT_BUSY)
        await expect_error(client.call("navigate_tree", {"targetId": a1}), codes.AGENT_BUSY)
        await expect_error(client.call("compact"), codes.AGENT_BUSY)
        await expect_error(client.call("new_session"), codes.AGENT_BUSY)
        await expect_error(client.call("fork", {"entryId": a1}), codes.AGENT_BUSY)
        assert (await client.abort()).aborted is True
        with anyio.fail_after(WAIT):
            while not client.unmatched:  # noqa: ASYNC110 (the client's reader fills it)
                await anyio.sleep(0.01)
        (answer,) = client.unmatched
        assert answer["id"] == "nav"
        assert answer["result"]["cancelled"] is True
        assert await entries_now(client) == before
        # Idle again: everything works.
        assert (await client.navigate_tree(a1)).leafId == a1


def _long_session(folder: Path, cwd: Path, turns: int) -> Path:
    """A session file of ``2 * turns`` message entries in one chain, written directly."""
    lines = [
        orjson.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "s-long",
                "timestamp": "2025-01-01T00:00:00.000Z",
                "cwd": str(cwd),
            }
        )
    ]
    parent: str | None = None
    for turn in range(turns):
        for role in ("user", "assistant"):
            entry_id = f"{len(lines):08x}"
            content: Any = (
                f"question {turn} " + "x" * 300
                if role == "user"
                else [{"type": "text", "text": f"answer {turn}"}]
            )
            message: JsonDict = {
                "role": role,
                "content": content,
                "timestamp": 1_735_689_600_000 + len(lines),
            }
            if role == "assistant":
                message |= {"provider": "faux", "model": "faux-1", "stopReason": "stop"}
            entry = {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2025-01-01T00:00:01.000Z",
                "message": message,
            }
            lines.append(orjson.dumps(entry))
            parent = entry_id
    path = folder / "long.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


async def test_a_big_read_leaves_the_server_answering_and_sends_the_entries_as_stored(e2e: E2E) -> None:
    path = _long_session(e2e.root, e2e.cwd, 10_000)
    stored = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    async with e2e.server("--no-session") as client:
        await client.call("switch_session", {"sessionPath": str(path)})
        finished: list[str] = []

        async def call(method: str, params: JsonDict | None = None) -> Any:
            result = await client.call(method, params)
            finished.append(method)
            return result

        async with anyio.create_task_group() as group:
            group.start_soon(call, "get_tree")  # the first one builds the rows: the slow one
            await anyio.sleep(0.01)
            group.start_soon(call, "get_state")
        assert finished == ["get_state", "get_tree"]  # answered while the tree was built
        entries = await client.call("get_entries")
        assert entries["entries"] == stored
        messages = await client.call("get_messages")
        assert messages["messages"] == [e["message"] for e in stored]
        tree = await client.call("get_tree", {"filter": "user-only", "maxDepth": 5})
        assert [n["preview"][:10] for n in tree["nodes"]] == ["question 0", "question 1", "question 2"]
        since = await client.call("get_tree", {"since": tree["cursor"]})
        assert since["nodes"] == []
        await expect_error(client.call("get_tree", {"rootId": "nope"}), codes.ENTRY_NOT_FOUND)


async def test_a_get_state_sent_right_behind_a_big_get_entries_is_answered_before_it(e2e: E2E) -> None:
    # The second get_entries finds its rows built: what is left is encoding and writing about
    # 20 MB, which once held the loop, so a get_state arriving meanwhile waited behind it.
    path = _long_session(e2e.root, e2e.cwd, 30_000)
    stored = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    async with e2e.server("--no-session") as client:
        await client.call("switch_session", {"sessionPath": str(path)})
        assert (await client.call("get_entries"))["entries"] == stored
        finished: list[str] = []
        entries: list[Any] = []

        async def call(method: str) -> None:
            result = await client.call(method)
            finished.append(method)
            if method == "get_entries":
                entries.extend(result["entries"])

        async with anyio.create_task_group() as group:
            group.start_soon(call, "get_entries")
            await anyio.sleep(0.005)
            group.start_soon(call, "get_state")
        assert finished == ["get_state", "get_entries"]
        assert entries == stored  # whole, in order, every line as stored
