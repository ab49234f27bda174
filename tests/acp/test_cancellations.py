"""The bookkeeping behind ``$/cancel_request`` (``rpc_agent.acp.cancellation``), in tasks as the
SDK runs handlers: each starts with a copy of the context the transport set for its request."""

from __future__ import annotations

import contextvars
from typing import Any

import anyio
import pytest

from acp import RequestError
from rpc_agent.acp.cancellation import REQUEST_CANCELLED, Cancellations


def request(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/list", "params": {}}


def in_request(cancellations: Cancellations, request_id: Any) -> contextvars.Context:
    """The context a handler's task starts with: copied right after the transport saw it."""
    cancellations.received(request(request_id))
    return contextvars.copy_context()


@pytest.mark.anyio
async def test_a_guarded_handler_is_answered_request_cancelled() -> None:
    cancellations = Cancellations()
    started = anyio.Event()
    outcome: list[Any] = []

    async def handler() -> None:
        try:
            with cancellations.guard():
                started.set()
                await anyio.sleep_forever()
        except RequestError as exc:
            outcome.append(exc.code)

    async with anyio.create_task_group() as group:
        # As the SDK's read loop does: the message is seen, then its task is made (a copy of
        # this context), then the loop reads on (the next message resets the id here).
        cancellations.received(request(7))
        group.start_soon(handler)
        cancellations.received({"jsonrpc": "2.0", "method": "session/cancel", "params": {}})
        await started.wait()
        cancellations.cancel({"requestId": 7.0})  # the same JSON number
    assert outcome == [REQUEST_CANCELLED]


def test_ids_are_told_apart_and_cancels_are_kept_until_the_answer() -> None:
    cancellations = Cancellations()
    stopped: list[str] = []
    number = in_request(cancellations, 1)
    text = in_request(cancellations, "1")
    cancellations.cancel({"requestId": 1})  # before its handler said how to stop
    assert text.run(lambda: cancellations.on_cancel(lambda: stopped.append("text"))) is False
    assert number.run(lambda: cancellations.on_cancel(lambda: stopped.append("number"))) is True
    assert stopped == ["number"]
    cancellations.answered("1")
    cancellations.cancel({"requestId": "1"})  # answered already: nothing to stop
    cancellations.cancel({"requestId": True})  # not an id
    cancellations.cancel([1])  # not params
    assert stopped == ["number"]


def test_a_notification_leaves_no_request_id_behind() -> None:
    cancellations = Cancellations()
    cancellations.received(request(3))
    cancellations.received({"jsonrpc": "2.0", "method": "session/cancel", "params": {}})
    assert contextvars.copy_context().run(lambda: cancellations.on_cancel(lambda: None)) is False
