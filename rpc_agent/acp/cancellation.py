"""``$/cancel_request``: a client withdraws one request it sent, and still gets its answer.

ACP's cancellation page lets an agent stop the work a request started, and requires an answer
either way: a valid result (``session/prompt`` ends with stop reason ``cancelled``) or the error
-32800 "Request cancelled". The SDK (0.12.1) knows no ``$/`` notification and runs each request
in a task of its own that it never lets us name, so the pieces meet here:

- the transport tells ``Cancellations`` about each request it hands to the SDK and each answer
  it writes, and routes ``$/cancel_request`` here instead of to the SDK;
- it also puts the request's id into the ``REQUEST_ID`` context variable just before the SDK
  reads the message: the SDK creates the request's task right away in the same task, so the
  handler's task starts with a copy of that context and can find out which request it serves;
- a handler runs its work inside ``guard`` (any request: the work is cancelled and the answer
  is -32800) or registers its own way to stop (``session/prompt``: the run is aborted and the
  prompt answers ``cancelled`` as with ``session/cancel``).

A cancel that arrives before its handler started is remembered until the answer is written;
one for a request already answered, or never received, changes nothing. Requests whose work
must not stop halfway (``session/close``, ``session/delete``) are not cancellable: they are
short, and they answer as usual.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar, cast

import anyio

from acp import RequestError

REQUEST_CANCELLED = -32800

Handler = TypeVar("Handler", bound=Callable[..., Coroutine[Any, Any, Any]])

REQUEST_ID: ContextVar[Any] = ContextVar("rpc_agent_acp_request_id", default=None)
"""The id of the request the current task answers (None outside a request's task)."""


def _key(request_id: Any) -> tuple[type, Any]:
    """Ids 1 and "1" are different requests (and 1 and 1.0 the same)."""
    return (str if isinstance(request_id, str) else float, request_id)


def cancelled_error() -> RequestError:
    return RequestError(REQUEST_CANCELLED, "Request cancelled")


class Cancellations:
    """The requests in flight on one connection, and how to stop each of them."""

    def __init__(self) -> None:
        self._in_flight: set[tuple[type, Any]] = set()
        self._stoppers: dict[tuple[type, Any], Callable[[], None]] = {}
        self._early: set[tuple[type, Any]] = set()
        """Cancelled before their handler said how to stop them."""

    # --- the transport ------------------------------------------------------------------

    def received(self, message: Mapping[str, Any]) -> None:
        """A message is about to reach the SDK: a request's handler will know its id."""
        if "id" in message and "method" in message:
            self._in_flight.add(_key(message["id"]))
            REQUEST_ID.set(message["id"])
        else:
            REQUEST_ID.set(None)

    def answered(self, request_id: Any) -> None:
        key = _key(request_id)
        self._in_flight.discard(key)
        self._stoppers.pop(key, None)
        self._early.discard(key)

    def cancel(self, params: Any) -> None:
        """``$/cancel_request`` with ``params``; anything malformed or unknown is ignored (it is a
        notification: there is no one to tell)."""
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if (
            request_id is None
            or isinstance(request_id, bool)
            or not isinstance(request_id, str | int | float)
        ):
            return
        key = _key(request_id)
        if key not in self._in_flight:
            return
        stop = self._stoppers.pop(key, None)
        if stop is None:
            self._early.add(key)
        else:
            stop()

    # --- the handlers -------------------------------------------------------------------

    def on_cancel(self, stop: Callable[[], None]) -> bool:
        """Call ``stop`` if the current request is cancelled; True when it already was (and
        ``stop`` has been called)."""
        request_id = REQUEST_ID.get()
        if request_id is None:
            return False
        key = _key(request_id)
        if key in self._early:
            self._early.discard(key)
            stop()
            return True
        if key in self._in_flight:
            self._stoppers[key] = stop
        return False

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Run the body cancellable; a cancelled body raises -32800 "Request cancelled"."""
        with anyio.CancelScope() as scope:
            self.on_cancel(scope.cancel)
            yield
        if scope.cancelled_caught:
            raise cancelled_error()


class HasCancellations(Protocol):
    cancellations: Cancellations


def cancellable(handler: Handler) -> Handler:
    """An agent method whose request ``$/cancel_request`` may cancel (answered with -32800)."""

    @functools.wraps(handler)
    async def run(agent: HasCancellations, *args: Any, **kwargs: Any) -> Any:
        with agent.cancellations.guard():
            return await handler(agent, *args, **kwargs)
        raise cancelled_error()  # the guard raises on its own; this keeps mypy's paths whole

    return cast(Handler, run)
