"""The router in process, its requests in flight: cancelled all or by id, counted as foreground
work while they run, and what the end of the input does to them and to the server's own requests."""

from __future__ import annotations

import anyio
import pytest

from rpc_agent.io.background import Foreground
from rpc_agent.server import ConnectionClosedError, MethodRegistry, Router
from rpc_agent.server import errors as codes
from server.router_testlib import Lines, Sink, forever_registry, request, serving


@pytest.mark.anyio
async def test_cancel_all_answers_every_running_request_with_cancelled() -> None:
    registry, started = forever_registry()
    async with serving(registry) as (router, sink, lines):
        lines.feed(request(1, "forever"), request("two", "forever"), {"jsonrpc": "2.0", "method": "forever"})
        await started.wait_for(3)
        assert sorted(router.in_flight, key=repr) == sorted(
            [(1, "forever"), ("two", "forever"), (None, "forever")], key=repr
        )
        assert router.cancel_all("shutting down for the test") == 3
        await sink.wait_for(2)
    assert sorted(message["id"] for message in sink.messages if isinstance(message["id"], int)) == [1]
    for message in sink.messages:
        assert message["error"]["code"] == codes.CANCELLED
        assert "shutting down for the test" in message["error"]["message"]
    assert {message["id"] for message in sink.messages} == {1, "two"}
    assert router.in_flight == []


@pytest.mark.anyio
async def test_cancel_by_id_cancels_only_that_request() -> None:
    registry, started = forever_registry()
    async with serving(registry) as (router, sink, lines):
        lines.feed(request(1, "forever"), request(2, "forever"))
        await started.wait_for(2)
        assert router.cancel(2, "aborted")
        assert not router.cancel(3)
        await sink.wait_for(1)
        assert sink.messages[0]["id"] == 2
        assert sink.messages[0]["error"]["code"] == codes.CANCELLED
        assert router.in_flight == [(1, "forever")]
        router.cancel_all()


@pytest.mark.anyio
async def test_a_running_request_is_foreground_work_until_it_ends() -> None:
    """Background threads (a tree built after an open) hold back while it runs."""
    foreground = Foreground()
    before = foreground.under_way
    registry, started = forever_registry()
    async with serving(registry, foreground=foreground) as (router, sink, lines):
        lines.feed(request(1, "forever"), request(2, "forever"))
        await started.wait_for(2)
        assert foreground.under_way == before + 2
        assert not foreground.wait_quiet(0.01)
        router.cancel(2)
        await sink.wait_for(1)
        assert foreground.under_way == before + 1
        router.cancel_all()
        await sink.wait_for(2)
    assert foreground.under_way == before


@pytest.mark.anyio
async def test_a_server_request_fails_once_the_input_has_ended() -> None:
    outcome: list[BaseException] = []

    async def ask(router: Router) -> None:
        try:
            await router.request("client/question", {"q": 1})
        except ConnectionClosedError as exc:
            outcome.append(exc)

    async with serving(MethodRegistry()) as (router, sink, lines), anyio.create_task_group() as task_group:
        task_group.start_soon(ask, router)
        await sink.wait_for(1)
        assert sink.messages[0]["method"] == "client/question"
        lines.end()
    assert len(outcome) == 1
    with pytest.raises(ConnectionClosedError):
        await router.request("client/question")


@pytest.mark.anyio
async def test_on_eof_can_cancel_the_work_instead_of_waiting_for_it() -> None:
    registry, _started = forever_registry()
    sink, lines = Sink(), Lines()
    router = Router(registry, sink)
    lines.feed(request(1, "forever"))
    lines.end()
    with anyio.fail_after(30):
        await router.serve(lines, on_eof=lambda: router.cancel_all("the client went away"))
    assert sink.messages == [
        {
            "jsonrpc": "2.0",
            "error": {"code": codes.CANCELLED, "message": "forever was cancelled: the client went away"},
            "id": 1,
        }
    ]
