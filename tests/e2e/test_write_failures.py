"""A session write that fails (here: a real file-size limit on the server process, so that
write(2) returns EFBIG) reaches the host as an error with its request id, closes every event it
opened, and changes nothing that could not be stored."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from e2e.conftest import E2E, PAIRS, JsonDict, RawServer, event_types, validate_events
from rpc_agent.server import errors as codes

pytestmark = pytest.mark.anyio


LIMIT = 4096
"""RLIMIT_FSIZE of the server: a short conversation fits, a long answer does not."""

LONG = "y" * (2 * LIMIT)

# Python ignores SIGXFSZ, so past the limit write(2) fails with EFBIG instead of killing it.
_LIMITED = (
    "import os, resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
    "os.execv(sys.executable, [sys.executable, '-m', 'rpc_agent', *sys.argv[1:]])"
)


@asynccontextmanager
async def limited_server(e2e: E2E, script: list[JsonDict]) -> AsyncIterator[RawServer]:
    async with e2e.raw(script=script, python_args=("-c", _LIMITED.format(limit=LIMIT))) as server:
        yield server
        assert await server.close_and_wait() == 0


def assert_paired(events: list[JsonDict]) -> None:
    """Every start has its end, and agent_end comes last (with agent_settled after it)."""
    validate_events(events)
    kinds = event_types(events)
    assert kinds[-2:] == ["agent_end", "agent_settled"], kinds
    for start, end in PAIRS:
        assert kinds.count(start) == kinds.count(end), (start, kinds)


async def test_a_failed_write_of_an_answer_ends_every_event_it_opened(e2e: E2E) -> None:
    async with limited_server(e2e, [{"text": LONG}]) as server:
        answer = await server.call("prompt", {"message": "talk"}, request_id="p-1")
        assert answer["error"]["code"] == codes.PERSISTENCE_FAILED, answer
        assert answer["id"] == "p-1"
        assert_paired(server.events)
        kinds = event_types(server.events)
        assert kinds.index("message_end", kinds.index("turn_start")) < kinds.index("turn_end")
        # The latched error is told again, still with the request id, and nothing hangs.
        again = await server.call("prompt", {"message": "again"}, request_id=7)
        assert again["error"]["code"] == codes.PERSISTENCE_FAILED
        assert again["id"] == 7


async def test_a_failed_write_of_a_tool_result_ends_the_tool_and_the_turn(e2e: E2E) -> None:
    command = f"head -c {2 * LIMIT} /dev/zero | tr '\\0' z"
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}]
    async with limited_server(e2e, script) as server:
        answer = await server.call("prompt", {"message": "run it"}, request_id="p")
        assert answer["error"]["code"] == codes.PERSISTENCE_FAILED, answer
        assert answer["id"] == "p"
        assert_paired(server.events)
        assert "tool_execution_end" in event_types(server.events)


async def snapshot(server: RawServer) -> tuple[JsonDict, JsonDict, JsonDict]:
    state = (await server.call("get_state"))["result"]
    tree = (await server.call("get_tree"))["result"]
    messages = (await server.call("get_messages"))["result"]
    return state, tree, messages


async def test_mutations_that_cannot_be_stored_change_nothing(e2e: E2E) -> None:
    script: list[JsonDict] = [{"text": "first answer"}, {"text": "second answer"}]
    async with limited_server(e2e, script) as server:
        assert "result" in await server.call("prompt", {"message": "one"})
        assert "result" in await server.call("prompt", {"message": "two"})
        before, tree, messages = await snapshot(server)
        first_user = next(n for n in tree["nodes"] if n["role"] == "user")
        first_answer = next(n for n in tree["nodes"] if n["role"] == "assistant")

        # The first failure, in the middle of a mutation: it is rolled back.
        failed = await server.call("set_session_name", {"name": LONG}, request_id="name")
        assert failed["error"]["code"] == codes.PERSISTENCE_FAILED, failed
        assert failed["id"] == "name"
        assert await snapshot(server) == (before, tree, messages)

        # Latched from now on: every mutation answers the error and changes nothing.
        mutations: list[tuple[str, JsonDict]] = [
            ("navigate_tree", {"targetId": first_answer["id"]}),
            ("navigate_tree", {"targetId": first_user["id"]}),
            ("navigate_tree", {"targetId": first_answer["id"], "label": "here"}),
            ("set_model", {"modelId": "faux-mini"}),
            ("cycle_model", {}),
            ("set_thinking_level", {"level": "high"}),
            ("cycle_thinking_level", {}),
            ("set_label", {"entryId": first_user["id"], "label": "start"}),
            ("set_session_name", {"name": "short"}),
            ("compact", {}),
            ("bash", {"command": "echo hi"}),
        ]
        for index, (method, params) in enumerate(mutations):
            answer = await server.call(method, params or None, request_id=index)
            assert answer.get("error", {}).get("code") == codes.PERSISTENCE_FAILED, (method, answer)
            assert answer["id"] == index
            assert await snapshot(server) == (before, tree, messages), method
