"""The Anthropic provider: Claude through the official ``anthropic`` SDK, streaming.

The client is made with ``max_retries=0``: the agent loop owns retries. It is cached per
credentials and event loop, and closed by ``aclose()`` when the server shuts down.

Stream contract (what the agent loop can rely on):

- Either ``stream`` raises ``ProviderError`` before yielding anything (HTTP errors, connection
  failures, and any failure before the first content block, including an in-stream ``error``
  event right after ``message_start``), or it yields ``start`` first and then ends with
  exactly one ``done`` or ``error`` event. ``start`` is yielded when the first content block
  begins (or at the end of a message without content).
- A failure after content arrived (an in-stream ``error`` event, which the SDK raises as an
  APIStatusError with status 200; a dropped connection or read timeout, which surface as
  httpx2 exceptions; a body that ends early) ends the stream with an
  ``error`` event. Its ``partial`` keeps every block received so far (open blocks as they
  stood, no ``*_end`` events for them) with stopReason "error" and errorMessage set, and the
  event's ``error`` field holds the classified ``ProviderError`` (retryable, overflow, status,
  retry_after) so the loop can decide whether to retry. ``reason`` is "error". A failure
  after ``message_delta`` brought the stop reason is ignored: every block is complete then,
  and the stream ends with ``done``.
- Cancelling the consuming task (or closing the generator) closes the HTTP stream at once
  and lets the cancellation through; nothing more is yielded.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, cast

import anyio
import anyio.lowlevel

from rpc_agent.credentials import CredentialStore
from rpc_agent.errors import ProviderError, ProviderNotConfiguredError
from rpc_agent.providers.anthropic.errors import classify_error
from rpc_agent.providers.anthropic.sdk import sdk, warm_up
from rpc_agent.providers.anthropic.stream import Assembler, drain
from rpc_agent.providers.base import AssistantEvent, ModelInfo, ProviderRequest
from rpc_agent.providers.models import PROVIDER, known_spec, listed_models, resolve_model
from rpc_agent.providers.request import build_params

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import RawMessageStreamEvent

__all__ = ["AnthropicProvider"]

CLOSE_TIMEOUT = 5.0
"""Seconds a shielded close of the HTTP stream may take after a cancellation."""

INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"


class AnthropicProvider:
    """Claude via ``anthropic.AsyncAnthropic``; see the module docstring for the contract."""

    name = PROVIDER

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        read_timeout: float = 300.0,
        cache: bool = True,
        credentials: CredentialStore | None = None,
    ) -> None:
        """``api_key``/``base_url`` default to ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)
        and ANTHROPIC_BASE_URL, read at each call so a changed environment takes effect; then
        to the key ``rpc-agent login`` stored in ``credentials`` (read at each call too, so a
        login or logout takes effect)."""
        self._api_key = api_key
        self._stored = credentials
        self._base_url = base_url
        self._timeout = timeout
        self._read_timeout = read_timeout
        self._cache = cache
        self._client: AsyncAnthropic | None = None
        self._client_key: tuple[str, str, str | None, object] | None = None

    # Provider protocol --------------------------------------------------------------------

    def models(self) -> list[ModelInfo]:
        return listed_models()

    def resolve_model(self, model_id: str) -> ModelInfo:
        return resolve_model(model_id)

    def knows_model(self, model_id: str) -> bool:
        return known_spec(model_id) is not None

    async def warm_up(self) -> None:
        await warm_up()

    def is_configured(self) -> bool:
        return self._credentials()[0] is not None

    async def aclose(self) -> None:
        client, self._client, self._client_key = self._client, None, None
        if client is not None:
            with anyio.CancelScope(shield=True):
                await client.close()

    async def stream(self, request: ProviderRequest) -> AsyncIterator[AssistantEvent]:
        client = await self._get_client()
        params = build_params(request, cache=self._cache)
        headers: dict[str, str] = {}
        if "thinking" in params and params["thinking"].get("type") == "enabled":
            # Claude 4 models think between tool calls only with this beta (built into adaptive).
            headers["anthropic-beta"] = INTERLEAVED_THINKING_BETA
        try:
            sdk_stream = await client.messages.create(**params, stream=True, extra_headers=headers or None)
        except Exception as exc:
            raise classify_error(exc) from exc

        assembler = Assembler(request.model)
        failure: ProviderError | None = None
        try:
            while True:
                try:
                    event: RawMessageStreamEvent = await sdk_stream.__anext__()
                except StopAsyncIteration:
                    break
                for out in assembler.handle(event):
                    yield out
                if assembler.finished:
                    await drain(sdk_stream)
                    break
        except Exception as exc:
            if assembler.stop_reason is None:  # after message_delta every block is complete
                failure = classify_error(exc)
                if not assembler.started:
                    raise failure from exc
        finally:
            with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
                await sdk_stream.close()

        if failure is None and not assembler.finished and assembler.stop_reason is None:
            failure = ProviderError(
                "Anthropic API stream ended before the message was complete", retryable=True
            )
            if not assembler.started:
                raise failure
        if failure is not None:
            yield assembler.error(failure)
            return
        for out in assembler.done():
            yield out

    # internals ----------------------------------------------------------------------------

    def _credentials(self) -> tuple[str | None, str | None, str | None]:
        """(secret, kind, base_url); kind is "api_key" or "auth_token"."""
        base_url = self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        if self._api_key:
            return self._api_key, "api_key", base_url
        key = os.environ.get("ANTHROPIC_API_KEY")
        if key:
            return key, "api_key", base_url
        token = os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if token:
            return token, "auth_token", base_url
        stored = self._stored.api_key(PROVIDER) if self._stored is not None else None
        if stored:
            return stored, "api_key", base_url
        return None, None, base_url

    async def _get_client(self) -> AsyncAnthropic:
        secret, kind, base_url = self._credentials()
        if secret is None or kind is None:
            raise ProviderNotConfiguredError(
                "Anthropic provider is not configured: set ANTHROPIC_API_KEY "
                "(and ANTHROPIC_BASE_URL for a proxy or gateway) or run `rpc-agent login`"
            )
        loop = anyio.lowlevel.current_token().native_token
        key = (secret, kind, base_url, loop)
        if self._client is not None and self._client_key == key:
            return self._client
        module = await sdk()
        httpx2 = sys.modules["httpx2"]
        if self._timeout is not None:
            timeout = httpx2.Timeout(self._timeout, connect=10.0)
        else:
            timeout = httpx2.Timeout(connect=10.0, read=self._read_timeout, write=60.0, pool=60.0)
        old = self._client
        credentials = {"api_key": secret} if kind == "api_key" else {"auth_token": secret}
        self._client = cast(
            "AsyncAnthropic",
            module.AsyncAnthropic(**credentials, base_url=base_url, max_retries=0, timeout=timeout),
        )
        self._client_key = key
        if old is not None:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await old.close()  # may fail for a client bound to a finished loop
        return self._client
