"""A pipelined burst of ``set_label``: every answer comes once its label is on the disk, in the
order sent, batch items each in their place; labels that could not be stored are answered with
the error and leave the tree as the file has it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from e2e.conftest import E2E, JsonDict, RawServer, read_jsonl
from e2e.test_write_failures import LIMIT, limited_server
from rpc_agent.server import errors as codes

pytestmark = pytest.mark.anyio


def label_request(request_id: Any, entry_id: str, label: str) -> JsonDict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "set_label",
        "params": {"entryId": entry_id, "label": label},
    }


async def conversation(server: RawServer) -> tuple[Path, str]:
    """A stored session with one exchange: its file and the user message's entry id."""
    assert "result" in await server.call("prompt", {"message": "hello"})
    state = (await server.call("get_state"))["result"]
    tree = (await server.call("get_tree"))["result"]
    return Path(state["sessionFile"]), tree["nodes"][0]["id"]


def labels_in(tree: JsonDict) -> dict[str, str | None]:
    return {node["id"]: node["label"] for node in tree["nodes"]}


@pytest.mark.in_process  # the order of answers and what is stored, not the pipes
async def test_a_pipelined_burst_is_answered_in_order_each_label_already_stored(e2e: E2E) -> None:
    async with e2e.raw() as server:
        path, user_id = await conversation(server)
        lines = [orjson.dumps(label_request(i, user_id, f"mark {i}")) + b"\n" for i in range(60)]
        batch = [label_request(f"b{i}", user_id, f"batch {i}") for i in range(20)]
        batch.insert(5, label_request("bad", "no-such-entry", "x"))
        await server.send_raw(b"".join(lines) + orjson.dumps(batch) + b"\n")
        for i in range(60):
            answer = await server.recv()
            assert answer["id"] == i, answer
            stored = {e["id"]: e for e in read_jsonl(path)}
            label_entry = stored[answer["result"]["labelEntryId"]]
            assert (label_entry["type"], label_entry["targetId"], label_entry["label"]) == (
                "label",
                user_id,
                f"mark {i}",
            )
        answers = await server.recv()
        assert [a["id"] for a in answers] == [f"b{i}" for i in range(5)] + ["bad"] + [
            f"b{i}" for i in range(5, 20)
        ]
        assert answers[5]["error"]["code"] == codes.ENTRY_NOT_FOUND
        stored_ids = {e["id"] for e in read_jsonl(path)}
        assert all(a["result"]["labelEntryId"] in stored_ids for a in answers if a["id"] != "bad")
        tree = (await server.call("get_tree"))["result"]
        assert labels_in(tree)[user_id] == "batch 19"


async def test_labels_that_cannot_be_stored_are_errors_and_change_nothing(e2e: E2E) -> None:
    label = "z" * 200
    count = LIMIT // len(label) + 5  # more than the file may still take
    async with limited_server(e2e, [{"text": "hi"}]) as server:
        path, user_id = await conversation(server)
        await server.send_raw(
            b"".join(orjson.dumps(label_request(i, user_id, f"{i} {label}")) + b"\n" for i in range(count))
        )
        answers = [await server.recv() for _ in range(count)]
        assert [a["id"] for a in answers] == list(range(count))
        failed = [a["id"] for a in answers if "error" in a]
        assert failed, "the file size limit was never reached"
        assert all(answers[i]["error"]["code"] == codes.PERSISTENCE_FAILED for i in failed)
        # Answered labels are stored; the failed batch may have left some of its lines (or part
        # of one) in the file, but none of its labels is answered as set or shown in the tree.
        complete = path.read_bytes().rsplit(b"\n", 1)[0].split(b"\n")
        stored = [e["id"] for e in map(orjson.loads, complete) if e["type"] == "label"]
        done = [a for a in answers if "result" in a]
        assert stored[: len(done)] == [a["result"]["labelEntryId"] for a in done]
        tree = (await server.call("get_tree"))["result"]
        assert labels_in(tree)[user_id] == (f"{done[-1]['id']} {label}" if done else None)
