"""A tiny JSON-RPC server over stdio built from the router alone, for the transport tests.

Run as a script (``python rpc_test_server.py``): it serves until EOF on stdin, or until SIGTERM
(which cancels the running requests and exits 0 with stdin still open).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio
from pydantic import BaseModel

from rpc_agent.server import MethodRegistry, Router, RpcError, open_stdio
from rpc_agent.server import errors as codes


class Echo(BaseModel):
    """What ``echo`` takes and gives back (and what the other test methods take)."""

    text: str
    extra: Any = None


class SlowParams(BaseModel):
    seconds: float = 3600.0
    tag: str = ""


class SlowResult(BaseModel):
    tag: str
    slept: float


class TypedParams(BaseModel):
    count: int
    name: str
    ratio: float = 1.0
    tags: list[str] = []


class TypedResult(BaseModel):
    summary: str


class Pong(BaseModel):
    pong: bool = True


class InFlight(BaseModel):
    requests: list[list[Any]]


class AskResult(BaseModel):
    answer: Any


class DomainError(Exception):
    """Stands for a session-layer error that the error mapper knows."""


router: Router | None = None


def _router() -> Router:
    assert router is not None
    return router


def echo(p: Echo) -> Echo:
    return Echo(text=p.text, extra=p.extra)


async def slow(p: SlowParams) -> SlowResult:
    await anyio.sleep(p.seconds)
    return SlowResult(tag=p.tag, slept=p.seconds)


def fail_rpc(_p: None) -> Pong:
    raise RpcError(codes.AGENT_BUSY, "the agent is busy", {"hint": "abort first"})


async def fail_value(_p: None) -> Pong:
    raise ValueError("boom")


def fail_value_inline(_p: None) -> Pong:
    raise ValueError("inline boom")


async def fail_domain(_p: None) -> Pong:
    raise DomainError("no such session: x.jsonl")


def typed(p: TypedParams) -> TypedResult:
    return TypedResult(summary=f"{p.name}:{p.count}:{p.ratio}:{','.join(p.tags)}")


def ping(_p: None) -> Pong:
    return Pong()


def in_flight(_p: None) -> InFlight:
    return InFlight(requests=[[request_id, method] for request_id, method in _router().in_flight])


async def ask_client(p: Echo) -> AskResult:
    return AskResult(answer=await _router().request("client/echo", {"text": p.text}))


def notify_me(p: Echo) -> None:
    _router().notify("event", {"type": "echo", "text": p.text})
    return None


def print_stray(_p: None) -> Pong:
    print("a stray print that must not reach the protocol stream")
    os.write(1, b"a raw write to fd 1\n")
    return Pong()


def map_error(exc: BaseException) -> RpcError | None:
    if isinstance(exc, DomainError):
        return RpcError(codes.SESSION_NOT_FOUND, str(exc), {"path": "x.jsonl"})
    return None


def build_registry() -> MethodRegistry:
    registry = MethodRegistry()
    registry.add("echo", echo, params=Echo, result=Echo, inline=True, description="Echo the text.")
    registry.add("slow", slow, params=SlowParams, result=SlowResult, description="Sleep, then answer.")
    registry.add("fail_rpc", fail_rpc, params=None, result=Pong, inline=True)
    registry.add("fail_value", fail_value, params=None, result=Pong)
    registry.add("fail_value_inline", fail_value_inline, params=None, result=Pong, inline=True)
    registry.add("fail_domain", fail_domain, params=None, result=Pong)
    registry.add("typed", typed, params=TypedParams, result=TypedResult, inline=True)
    registry.add("ping", ping, params=None, result=Pong, inline=True)
    registry.add("in_flight", in_flight, params=None, result=InFlight, inline=True)
    registry.add("ask_client", ask_client, params=Echo, result=AskResult)
    registry.add("notify_me", notify_me, params=Echo, result=None, inline=True)
    registry.add("print_stray", print_stray, params=None, result=Pong, inline=True)
    return registry


async def main() -> None:
    global router
    reader, writer = open_stdio()
    async with writer:
        router = Router(build_registry(), writer, error_mapper=map_error)
        async with anyio.create_task_group() as task_group:
            serve_scope = anyio.CancelScope()

            async def stop_on_sigterm() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM) as signals:
                    async for _ in signals:
                        _router().cancel_all("the server got SIGTERM")
                        serve_scope.cancel()
                        return

            task_group.start_soon(stop_on_sigterm)
            with serve_scope:
                await router.serve(reader)
            task_group.cancel_scope.cancel()
    print("test server: clean exit", file=sys.stderr)


if __name__ == "__main__":
    anyio.run(main)
