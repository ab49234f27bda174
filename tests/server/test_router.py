"""The router in process, its answers: what the subprocess tests cannot easily reach (results that
cannot be sent, big and stored results, the error mapper, notifications, deferred answers)."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest
from pydantic import BaseModel

from rpc_agent.methods.deferred import Deferred
from rpc_agent.methods.raw_json import RawJson
from rpc_agent.server import MethodRegistry, Router, RpcError
from rpc_agent.server import errors as codes
from rpc_agent.store.view import array_pieces
from server.router_testlib import Lines, Params, Result, Sink, request, served, serving


@pytest.mark.anyio
async def test_results_that_cannot_be_sent_become_internal_errors_with_the_id() -> None:
    class Text(BaseModel):
        text: str

    registry = MethodRegistry()
    registry.add("surrogate", lambda _p: Text(text="\ud800"), params=None, result=Text, inline=True)
    registry.add("not_a_model", lambda _p: ["a", "list"], params=None, result=None, inline=True)
    registry.add("wire_dict", lambda _p: {"plain": "dict"}, params=None, result=None, inline=True)

    async def coroutine(_p: None) -> None:
        return None

    registry.add("sneaky_async", lambda p: coroutine(p), params=None, result=None, inline=True)

    def odd_data(_p: None) -> None:
        raise RpcError(codes.PROVIDER_ERROR, "upstream failed", {"cause": ValueError("deep")})

    registry.add("odd_data", odd_data, params=None, result=None, inline=True)
    sink = await served(
        registry,
        request(1, "surrogate"),
        request(2, "not_a_model"),
        request(3, "sneaky_async"),
        request(4, "odd_data"),
        request(5, "wire_dict"),
    )
    results = {message["id"]: message["result"] for message in sink.messages if "result" in message}
    assert results == {5: {"plain": "dict"}}  # a hot handler's result already in wire shape
    by_id = {message["id"]: message["error"] for message in sink.messages if "error" in message}
    assert by_id[1]["code"] == codes.INTERNAL_ERROR
    assert "encoded" in by_id[1]["message"]
    assert by_id[2]["code"] == codes.INTERNAL_ERROR
    assert "list" in by_id[2]["message"]
    assert by_id[3]["code"] == codes.INTERNAL_ERROR
    assert "awaitable" in by_id[3]["message"]
    assert by_id[4] == {"code": codes.PROVIDER_ERROR, "message": "upstream failed", "data": {"cause": "deep"}}


@pytest.mark.anyio
async def test_a_big_result_goes_out_whole_after_the_requests_that_arrive_while_it_is_encoded() -> None:
    stored = [{"id": f"{i:08x}", "text": f"row {i} \u2028 é"} for i in range(5000)]
    rows = [RawJson(orjson.dumps(row)) for row in stored]
    returned, release = anyio.Event(), anyio.Event()

    async def big(_p: None) -> dict[str, Any]:
        returned.set()
        await release.wait()
        return {"cursor": 7, "rows": rows, "more": [1, 2]}

    registry = MethodRegistry()
    registry.add("big", big, params=None, result=None)
    registry.add("get_state", lambda _p: {"busy": False}, params=None, result=None, inline=True)
    async with serving(registry) as (_router, sink, lines):
        lines.feed(request("b", "big"))
        await returned.wait()
        release.set()  # the handler's result is ready to be encoded when get_state arrives
        lines.feed(request("s", "get_state"))
        await sink.wait_for(2)
    assert sink.messages[0] == {"jsonrpc": "2.0", "result": {"busy": False}, "id": "s"}
    expected = {"cursor": 7, "rows": stored, "more": [1, 2]}
    assert sink.messages[1] == {"jsonrpc": "2.0", "result": expected, "id": "b"}


@pytest.mark.anyio
async def test_stored_json_in_pieces_comes_out_whole_alone_and_as_a_batch_item() -> None:
    stored = [{"id": f"{i:08x}", "text": f"row {i} " + "x" * 40} for i in range(30000)]
    pieces = array_pieces([orjson.dumps(row) for row in stored])
    assert len(pieces) > 1  # over a megabyte: never joined on its way out

    async def big(_p: None) -> dict[str, Any]:
        return {"rows": RawJson(pieces), "leafId": "x"}

    class PartsSink(Sink):
        """A sink that takes a line in parts, as the stdio writer does."""

        def __init__(self) -> None:
            super().__init__()
            self.parts: list[list[bytes]] = []

        def write_parts(self, parts: list[bytes]) -> None:
            self.parts.append(parts)
            self.write_line(b"".join(parts))

    registry = MethodRegistry()
    registry.add("big", big, params=None, result=None)
    sink, lines = PartsSink(), Lines()
    lines.feed(request(1, "big"), [request(2, "big"), request(3, "big")])
    lines.end()
    await Router(registry, sink).serve(lines)
    # The answer alone went out in parts, the stored pieces among them as they are (not copied).
    assert len(sink.parts) == 1
    assert all(any(part is piece for part in sink.parts[0]) for piece in pieces)
    expected = {"rows": stored, "leafId": "x"}
    alone = next(m for m in sink.messages if type(m) is dict)
    batch = next(m for m in sink.messages if type(m) is list)
    assert alone == {"jsonrpc": "2.0", "result": expected, "id": 1}
    assert sorted(batch, key=lambda m: m["id"]) == [
        {"jsonrpc": "2.0", "result": expected, "id": 2},
        {"jsonrpc": "2.0", "result": expected, "id": 3},
    ]


@pytest.mark.anyio
async def test_the_error_mapper_is_consulted_and_its_failures_do_not_lose_the_answer() -> None:
    class Gone(Exception):
        pass

    def mapper(exc: BaseException) -> RpcError | None:
        if isinstance(exc, Gone):
            return RpcError(codes.SESSION_NOT_FOUND, "gone")
        if isinstance(exc, KeyError):
            raise RuntimeError("the mapper itself is broken")
        return None

    def raise_gone(_p: None) -> None:
        raise Gone

    def raise_key_error(_p: None) -> None:
        raise KeyError("k")

    registry = MethodRegistry()
    registry.add("gone", raise_gone, params=None, result=None, inline=True)
    registry.add("key", raise_key_error, params=None, result=None, inline=True)
    sink = await served(registry, request(1, "gone"), request(2, "key"), error_mapper=mapper)
    assert sink.messages[0] == {
        "jsonrpc": "2.0",
        "error": {"code": codes.SESSION_NOT_FOUND, "message": "gone"},
        "id": 1,
    }
    assert sink.messages[1]["id"] == 2
    assert sink.messages[1]["error"]["code"] == codes.INTERNAL_ERROR


@pytest.mark.anyio
async def test_notify_sends_models_by_alias_and_dicts_as_they_are() -> None:
    sink = Sink()
    router = Router(MethodRegistry(), sink)
    router.notify("event", Params(entryId="e", limit=2))
    router.notify("event", {"type": "agent_start"})
    router.notify("ping")
    assert sink.messages == [
        {"jsonrpc": "2.0", "method": "event", "params": {"entryId": "e", "limit": 2}},
        {"jsonrpc": "2.0", "method": "event", "params": {"type": "agent_start"}},
        {"jsonrpc": "2.0", "method": "ping"},
    ]


@pytest.mark.anyio
async def test_deferred_answers_wait_for_their_ready_in_order_and_are_cancelled_with_the_rest() -> None:
    made: list[str] = []
    more = anyio.Event()
    disk = anyio.Event()

    async def made_up_to(count: int) -> None:
        nonlocal more
        with anyio.fail_after(30):
            while len(made) < count:
                await more.wait()
                more = anyio.Event()

    def store(p: Params) -> Deferred:
        made.append(p.entry_id)  # made at once, in the reading loop
        more.set()

        async def ready() -> None:
            await disk.wait()
            if p.entry_id == "bad":
                raise RpcError(codes.PERSISTENCE_FAILED, "cannot store bad")

        return Deferred({"stored": p.entry_id}, ready)

    registry = MethodRegistry()
    registry.add("store", store, params=Params, result=Result, inline=True)
    sink, lines = Sink(), Lines()
    router = Router(registry, sink)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(router.serve, lines)
        lines.feed(
            request(1, "store", {"entryId": "a"}),
            [
                request(2, "store", {"entryId": "b"}),
                request(3, "nope"),
                request(4, "store", {"entryId": "bad"}),
            ],
            request(5, "store", {"entryId": "c"}),
        )
        await made_up_to(4)
        assert sink.messages == []  # nothing answered before the disk said so
        disk.set()
        await sink.wait_for(3)
        first, batch, last = sink.messages
        assert first == {"jsonrpc": "2.0", "result": {"stored": "a"}, "id": 1}
        assert [item["id"] for item in batch] == [2, 3, 4]
        assert batch[0]["result"] == {"stored": "b"}
        assert batch[1]["error"]["code"] == codes.METHOD_NOT_FOUND
        assert batch[2]["error"] == {"code": codes.PERSISTENCE_FAILED, "message": "cannot store bad"}
        assert last == {"jsonrpc": "2.0", "result": {"stored": "c"}, "id": 5}
        assert await registry.get("store").invoke({"entryId": "d"}) == {"stored": "d"}  # type: ignore[union-attr]

        disk = anyio.Event()  # the next ones never reach the disk
        lines.feed(request(6, "store", {"entryId": "e"}), request(7, "store", {"entryId": "f"}))
        await made_up_to(7)
        assert router.cancel_all("stopping for the test") == 1  # one task waits for all of them
        await sink.wait_for(5)
        lines.end()
    assert [(m["id"], m["error"]["code"]) for m in sink.messages[3:]] == [
        (6, codes.CANCELLED),
        (7, codes.CANCELLED),
    ]
    assert router.in_flight == []
