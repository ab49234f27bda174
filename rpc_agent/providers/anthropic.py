"""The Anthropic provider: Claude through the official ``anthropic`` SDK, streaming.

The SDK is imported lazily (``import anthropic`` takes 1-2 s; the server must answer
``initialize`` long before that): on the first ``stream`` call, or earlier in a worker thread
through ``warm_up()``. The client is made with ``max_retries=0``: the agent loop owns retries.

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
import email.utils
import importlib
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.lowlevel

from rpc_agent.providers.base import (
    AssistantEvent,
    AssistantEventType,
    JsonDict,
    ModelInfo,
    ProviderError,
    ProviderNotConfiguredError,
    ProviderRequest,
    empty_usage,
)
from rpc_agent.providers.convert import API, build_params
from rpc_agent.providers.models import PROVIDER, cost_of, known_spec, listed_models, resolve_model

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import RawMessageStreamEvent

__all__ = ["AnthropicProvider", "PartialJson", "classify_error", "warm_up"]

CLOSE_TIMEOUT = 5.0
"""Seconds a shielded close of the HTTP stream may take after a cancellation."""
DRAIN_TIMEOUT = 5.0
"""Seconds to wait for the end of the body after ``message_stop`` (so the connection is reused)."""

INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"

_OVERFLOW = re.compile(
    r"prompt is too long|context (?:window|length)|too many (?:input )?tokens|exceeds? the (?:model's )?"
    r"(?:context|maximum)|input length and `max_tokens` exceed|maximum context length",
    re.IGNORECASE,
)

_STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "refusal": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}


# --- lazy SDK import ----------------------------------------------------------------------


def _import_sdk() -> Any:
    try:
        return importlib.import_module("anthropic")
    except ImportError as exc:  # pragma: no cover - the SDK is a dependency
        raise ProviderNotConfiguredError(
            "the anthropic SDK is not installed (pip install 'anthropic>=2.10,<3')"
        ) from exc


async def warm_up() -> None:
    """Import the SDK in a worker thread, so the first model call does not wait 1-2 s."""
    if "anthropic" not in sys.modules:
        await anyio.to_thread.run_sync(_import_sdk)


async def _sdk() -> Any:
    module = sys.modules.get("anthropic")
    if module is None or getattr(module, "AsyncAnthropic", None) is None:
        module = await anyio.to_thread.run_sync(_import_sdk)
    return module


# --- error classification -----------------------------------------------------------------


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    try:
        value = headers.get("retry-after-ms")
        if value is not None:
            return max(0.0, float(value) / 1000)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def classify_error(exc: BaseException) -> ProviderError:
    """A ProviderError for anything the SDK or httpx2 raised during a call."""
    if isinstance(exc, ProviderError):
        return exc
    anthropic = sys.modules.get("anthropic")
    httpx2 = sys.modules.get("httpx2")
    if anthropic is not None and isinstance(exc, anthropic.APIStatusError):
        return _classify_status(exc)
    if anthropic is not None and isinstance(exc, anthropic.APIConnectionError):
        kind = "timed out" if isinstance(exc, anthropic.APITimeoutError) else "connection failed"
        cause = exc.__cause__
        detail = f": {type(cause).__name__}: {cause}" if cause else ""
        return ProviderError(f"Anthropic API {kind}{detail}", retryable=True)
    if httpx2 is not None and isinstance(exc, httpx2.TimeoutException):
        return ProviderError(f"Anthropic API stream timed out ({type(exc).__name__})", retryable=True)
    if httpx2 is not None and isinstance(
        exc, httpx2.NetworkError | httpx2.RemoteProtocolError | httpx2.DecodingError
    ):
        return ProviderError(
            f"Anthropic API connection dropped ({type(exc).__name__}: {exc})", retryable=True
        )
    return ProviderError(f"Anthropic provider error: {type(exc).__name__}: {exc}")


def _classify_status(exc: Any) -> ProviderError:
    status = int(exc.status_code)
    error_type = exc.type
    api_message = exc.api_message or ""
    body = exc.body
    if not error_type and isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            error_type = inner.get("type")
            api_message = api_message or str(inner.get("message") or "")
    if not api_message:
        api_message = str(exc.message)
    request_id = getattr(exc, "request_id", None)
    if request_id:
        api_message = f"{api_message} (request-id {request_id})"
    if status < 400:
        # An `error` event inside a 200 stream: its type says what happened.
        status = _STATUS_OF_TYPE.get(str(error_type), 500)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    label = f"{status} {error_type}" if error_type else str(status)
    if status in (401, 403):
        hint = "check ANTHROPIC_API_KEY" if status == 401 else "the API key lacks access to this model"
        return ProviderError(
            f"Anthropic authentication failed ({label}): {api_message} ({hint})", status=status
        )
    overflow = status == 413 or (status == 400 and bool(_OVERFLOW.search(api_message)))
    retryable = status in (408, 409, 429, 529) or status >= 500
    should_retry = headers.get("x-should-retry") if headers is not None else None
    if should_retry in ("true", "false") and not overflow:
        retryable = should_retry == "true"
    return ProviderError(
        f"Anthropic API error ({label}): {api_message}",
        status=status,
        retryable=retryable,
        overflow=overflow,
        retry_after=_retry_after(headers) if retryable else None,
    )


# --- partial JSON -------------------------------------------------------------------------

_STRING_RUN = re.compile(r'[^"\\]*')
_NUMBER_TAIL = re.compile(r"[-+.eE]+$")
_TAIL_ESCAPE = re.compile(r"(\\+)(u[0-9a-fA-F]{0,3}|u[dD][89abAB][0-9a-fA-F]{2})?$")
_SENTINEL = "\x00\x01partial\x01\x00"
_SENTINEL_JSON = json.dumps(_SENTINEL)


def _decodable_end(text: str, start: int, end: int) -> int:
    """The end of ``text[start:end]`` (the inside of an open JSON string) without an escape
    cut in the middle: a lone backslash, a partial ``\\uXXXX``, or a high surrogate whose low
    half has not arrived (decoded alone it would be a lone surrogate, which no JSON encoder
    downstream accepts)."""
    while end > start:
        match = _TAIL_ESCAPE.search(text, start, end)
        if match is None:
            return end
        slashes = len(match.group(1))
        if slashes % 2 == 0:
            return end  # escaped backslashes (and plain text after them)
        # A lone backslash, a partial \\u escape or a high surrogate: hold it back, and look
        # again, since what precedes it may be a high surrogate.
        end = match.start(1) + slashes - 1
    return end


def _find(value: Any, target: str) -> list[str | int] | None:
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if item == target:
            return [key]
        found = _find(item, target)
        if found is not None:
            return [key, *found]
    return None


class PartialJson:
    """Tool arguments from ``input_json_delta`` chunks, parsed best-effort after each chunk.

    ``value`` is the object as far as it can be completed: an open string value is closed,
    open objects and arrays are closed, a key or literal cut in the middle is left out until
    it is complete. The scanner state is kept between chunks, and while a long string value
    streams in (a file's content, typically) only the new part is decoded: a chunk costs
    about its own length, not the length of everything received, so a 50 KB argument in
    thousands of chunks stays cheap. Structural changes (a new key, a closed string) cost one
    C-level ``json.loads`` of the text so far.
    """

    __slots__ = (
        "_after_colon",
        "_decoded",
        "_decoded_to",
        "_in_string",
        "_is_key",
        "_path",
        "_pos",
        "_safe",
        "_stack",
        "_string_start",
        "text",
        "value",
    )

    def __init__(self) -> None:
        self.text = ""
        self.value: JsonDict = {}
        self._pos = 0
        self._stack: list[str] = []  # "{" or "["
        self._after_colon: list[bool] = []  # per open container: a value is expected next
        self._in_string = False
        self._is_key = False
        self._string_start = -1  # index of the opening quote of the current string
        self._safe: tuple[int, str] = (0, "")  # (cut position, closers) of a completable prefix
        self._path: list[str | int] | None = None  # where the open string value sits in value
        self._decoded = ""
        self._decoded_to = 0

    def feed(self, chunk: str) -> JsonDict:
        same_string = self._path is not None and self._in_string and not self._is_key
        string_start = self._string_start
        self.text += chunk
        self._scan()
        if same_string and self._in_string and self._string_start == string_start and self._extend_string():
            return self.value
        self._reparse()
        return self.value

    def final(self) -> JsonDict:
        if not self.text.strip():
            return self.value
        parsed = self._try(self.text)
        return parsed if parsed is not None else self.value

    @staticmethod
    def _try(text: str) -> JsonDict | None:
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def _closers(self) -> str:
        return "".join("}" if kind == "{" else "]" for kind in reversed(self._stack))

    def _mark_safe(self, pos: int) -> None:
        self._safe = (pos, self._closers())

    def _scan(self) -> None:
        text = self.text
        pos = self._pos
        end = len(text)
        while pos < end:
            if self._in_string:
                pos = _STRING_RUN.match(text, pos).end()  # type: ignore[union-attr]
                if pos >= end:
                    break
                if text[pos] == "\\":
                    if pos + 1 >= end:
                        break  # the escaped character is in the next chunk
                    pos += 2
                    continue
                self._in_string = False  # closing quote
                pos += 1
                if not self._is_key and self._stack:
                    self._mark_safe(pos)
                continue
            char = text[pos]
            if char == '"':
                self._in_string = True
                self._string_start = pos
                self._is_key = bool(self._stack) and self._stack[-1] == "{" and not self._after_colon[-1]
            elif char in "{[":
                self._stack.append(char)
                self._after_colon.append(char == "[")
                self._mark_safe(pos + 1)
            elif char in "}]":
                if self._stack:
                    self._stack.pop()
                    self._after_colon.pop()
                self._mark_safe(pos + 1)
            elif char == ":":
                if self._after_colon:
                    self._after_colon[-1] = True
            elif char == "," and self._after_colon:
                self._mark_safe(pos)
                self._after_colon[-1] = self._stack[-1] == "["
            pos += 1
        self._pos = pos

    def _extend_string(self) -> bool:
        """Decode what arrived of the open string value and store it at its path."""
        end = _decodable_end(self.text, self._decoded_to, self._pos)
        if end > self._decoded_to:
            try:
                piece = json.loads('"' + self.text[self._decoded_to : end] + '"')
            except ValueError:
                self._path = None
                return False
            self._decoded += piece
            self._decoded_to = end
        target: Any = self.value
        assert self._path is not None
        for key in self._path[:-1]:
            target = target[key]
        target[self._path[-1]] = self._decoded
        return True

    def _reparse(self) -> None:
        self._path = None
        closers = self._closers()
        if self._in_string and not self._is_key:
            # Parse everything before the open string with a marker in its place, to learn
            # where the string goes; from then on only its new text is decoded.
            parsed = self._try(self.text[: self._string_start] + _SENTINEL_JSON + closers)
            path = _find(parsed, _SENTINEL) if parsed is not None else None
            if parsed is not None and path is not None:
                self.value = parsed
                self._path = path
                self._decoded = ""
                self._decoded_to = self._string_start + 1
                if self._extend_string():
                    return
        parsed = None
        if not self._stack and not self._in_string:
            parsed = self._try(self.text)
        elif not self._in_string:
            tail = self.text.rstrip().rstrip(",")
            parsed = self._try(tail + closers)
            if parsed is None:
                parsed = self._try(_NUMBER_TAIL.sub("", tail) + closers)  # "1." "1e" "-"
        if parsed is None:
            cut, safe_closers = self._safe
            parsed = self._try(self.text[:cut] + safe_closers) if cut else None
        if parsed is not None:
            self.value = parsed


# --- the stream ---------------------------------------------------------------------------


def _now_ms() -> int:
    return int(time.time() * 1000)


class _Assembler:
    """Raw SDK stream events -> our assistant message and AssistantEvents."""

    def __init__(self, model: ModelInfo) -> None:
        self.model = model
        self.partial: JsonDict = {
            "role": "assistant",
            "content": [],
            "api": API,
            "provider": PROVIDER,
            "model": model.id,
            "usage": empty_usage(),
            "stopReason": "stop",
            "timestamp": _now_ms(),
        }
        self.started = False
        self.finished = False
        self.stop_reason: str | None = None
        self._index: dict[int, int] = {}  # API block index -> our content index
        self._json: dict[int, PartialJson] = {}
        self._has_deltas: set[int] = set()

    def _event(self, kind: AssistantEventType, **fields: Any) -> AssistantEvent:
        return AssistantEvent(type=kind, partial=self.partial, **fields)

    def _start(self, out: list[AssistantEvent]) -> None:
        if not self.started:
            self.started = True
            out.append(self._event("start"))

    def _usage(self, usage: Any, *, replace: bool) -> None:
        stored = self.partial["usage"]
        for key, attr in (
            ("input", "input_tokens"),
            ("output", "output_tokens"),
            ("cacheRead", "cache_read_input_tokens"),
            ("cacheWrite", "cache_creation_input_tokens"),
        ):
            value = getattr(usage, attr, None)
            if value is not None:
                stored[key] = int(value)
            elif replace:
                stored[key] = 0
        stored["totalTokens"] = (
            stored["input"] + stored["output"] + stored["cacheRead"] + stored["cacheWrite"]
        )
        stored["cost"] = cost_of(stored, self.model)

    def handle(self, event: Any) -> list[AssistantEvent]:
        out: list[AssistantEvent] = []
        kind = getattr(event, "type", None)
        if kind == "content_block_delta":
            self._delta(event, out)
        elif kind == "content_block_start":
            self._block_start(event, out)
        elif kind == "content_block_stop":
            self._block_stop(event, out)
        elif kind == "message_start":
            usage = getattr(getattr(event, "message", None), "usage", None)
            if usage is not None:
                self._usage(usage, replace=True)
        elif kind == "message_delta":
            delta = event.delta
            if delta.stop_reason:
                self.stop_reason = str(delta.stop_reason)
                self.partial["stopReason"] = _STOP_REASONS.get(self.stop_reason, "stop")
                if self.stop_reason == "refusal":
                    details = getattr(delta, "stop_details", None)
                    note = getattr(details, "explanation", None) or getattr(details, "category", None)
                    self.partial["errorMessage"] = "Claude declined to continue (stop_reason refusal)" + (
                        f": {note}" if note else ""
                    )
            if event.usage is not None:
                self._usage(event.usage, replace=False)
        elif kind == "message_stop":
            self.finished = True
        return out

    def _block_start(self, event: Any, out: list[AssistantEvent]) -> None:
        block = event.content_block
        kind = block.type
        content: list[JsonDict] = self.partial["content"]
        index = len(content)
        if kind == "text":
            content.append({"type": "text", "text": ""})
            self._index[event.index] = index
            self._start(out)
            out.append(self._event("text_start", contentIndex=index))
            if block.text:
                self._text(index, "text", block.text, out)
        elif kind == "thinking":
            stored: JsonDict = {"type": "thinking", "thinking": ""}
            if block.signature:
                stored["thinkingSignature"] = block.signature
            content.append(stored)
            self._index[event.index] = index
            self._start(out)
            out.append(self._event("thinking_start", contentIndex=index))
            if block.thinking:
                self._text(index, "thinking", block.thinking, out)
        elif kind == "redacted_thinking":
            content.append(
                {
                    "type": "thinking",
                    "thinking": "[Reasoning redacted]",
                    "thinkingSignature": block.data,
                    "redacted": True,
                }
            )
            self._index[event.index] = index
            self._start(out)
            out.append(self._event("thinking_start", contentIndex=index))
        elif kind == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {}
            content.append(
                {"type": "toolCall", "id": block.id, "name": block.name, "arguments": dict(arguments)}
            )
            self._index[event.index] = index
            self._json[index] = PartialJson()
            self._start(out)
            out.append(self._event("toolcall_start", contentIndex=index))
        # Server-side tool blocks and future block types are not part of our message shape.

    def _text(self, index: int, key: str, text: str, out: list[AssistantEvent]) -> None:
        self.partial["content"][index][key] += text
        kind: AssistantEventType = "text_delta" if key == "text" else "thinking_delta"
        out.append(self._event(kind, contentIndex=index, delta=text))

    def _delta(self, event: Any, out: list[AssistantEvent]) -> None:
        index = self._index.get(event.index)
        if index is None:
            return
        delta = event.delta
        kind = delta.type
        block = self.partial["content"][index]
        if kind == "text_delta" and block["type"] == "text":
            self._text(index, "text", delta.text, out)
        elif kind == "thinking_delta" and block["type"] == "thinking":
            self._text(index, "thinking", delta.thinking, out)
        elif kind == "signature_delta" and block["type"] == "thinking":
            block["thinkingSignature"] = block.get("thinkingSignature", "") + delta.signature
        elif kind == "input_json_delta" and block["type"] == "toolCall":
            self._has_deltas.add(index)
            block["arguments"] = self._json[index].feed(delta.partial_json)
            out.append(self._event("toolcall_delta", contentIndex=index, delta=delta.partial_json))

    def _block_stop(self, event: Any, out: list[AssistantEvent]) -> None:
        index = self._index.get(event.index)
        if index is None:
            return
        block = self.partial["content"][index]
        kind = block["type"]
        if kind == "text":
            out.append(self._event("text_end", contentIndex=index, content=block["text"]))
        elif kind == "thinking":
            out.append(self._event("thinking_end", contentIndex=index, content=block["thinking"]))
        elif kind == "toolCall":
            if index in self._has_deltas:
                block["arguments"] = self._json[index].final()
            out.append(self._event("toolcall_end", contentIndex=index, toolCall=block))

    def done(self) -> list[AssistantEvent]:
        out: list[AssistantEvent] = []
        self._start(out)
        out.append(self._event("done", reason=self.partial["stopReason"]))
        return out

    def error(self, error: ProviderError) -> AssistantEvent:
        self.partial["stopReason"] = "error"
        self.partial["errorMessage"] = str(error)
        return self._event("error", reason="error", error=error)


# --- the provider -------------------------------------------------------------------------


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
    ) -> None:
        """``api_key``/``base_url`` default to ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)
        and ANTHROPIC_BASE_URL, read at each call so a changed environment takes effect."""
        self._api_key = api_key
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

        assembler = _Assembler(request.model)
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
                    await _drain(sdk_stream)
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
        return None, None, base_url

    async def _get_client(self) -> AsyncAnthropic:
        secret, kind, base_url = self._credentials()
        if secret is None or kind is None:
            raise ProviderNotConfiguredError(
                "Anthropic provider is not configured: set ANTHROPIC_API_KEY "
                "(and ANTHROPIC_BASE_URL for a proxy or gateway)"
            )
        loop = anyio.lowlevel.current_token().native_token
        key = (secret, kind, base_url, loop)
        if self._client is not None and self._client_key == key:
            return self._client
        sdk = await _sdk()
        httpx2 = sys.modules["httpx2"]
        if self._timeout is not None:
            timeout = httpx2.Timeout(self._timeout, connect=10.0)
        else:
            timeout = httpx2.Timeout(connect=10.0, read=self._read_timeout, write=60.0, pool=60.0)
        old = self._client
        credentials = {"api_key": secret} if kind == "api_key" else {"auth_token": secret}
        self._client = cast(
            "AsyncAnthropic",
            sdk.AsyncAnthropic(**credentials, base_url=base_url, max_retries=0, timeout=timeout),
        )
        self._client_key = key
        if old is not None:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await old.close()  # may fail for a client bound to a finished loop
        return self._client


async def _drain(sdk_stream: Any) -> None:
    """Read what follows ``message_stop`` (normally only the end of the body) so the
    connection goes back to the pool; a misbehaving server gets DRAIN_TIMEOUT seconds."""
    with anyio.move_on_after(DRAIN_TIMEOUT):
        try:
            while True:
                await sdk_stream.__anext__()
        except StopAsyncIteration:
            pass
        except Exception:
            pass  # the message is complete; a broken tail does not matter
