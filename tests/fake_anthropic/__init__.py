"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1, scripted per test.

Point the real SDK at it with ``ANTHROPIC_BASE_URL=fake.base_url`` (any API key will do).
Each ``POST /v1/messages`` takes the next scripted reply from the queue:

- ``Reply([...blocks], stop_reason=..., usage=...)``: a message streamed as real SSE
  (``event:`` + ``data:`` lines, chunked transfer): message_start, a ping, then per block
  content_block_start / content_block_delta (text_delta, thinking_delta + signature_delta,
  input_json_delta chunks) / content_block_stop, then message_delta and message_stop.
  Knobs: ``delay`` (seconds between events), ``drop_after=n`` (the connection is cut after n
  events), ``error_after=n`` (an in-stream ``error`` event after n events), ``hang_after=n``
  (stop after n events and wait until the client goes away), ``truncate_after=n`` (end the
  body cleanly after n events, without message_stop). Events are counted from 0 and the
  ping after message_start counts (``ping=False`` leaves it out). A request without
  ``"stream": true`` gets the same message as one JSON body.
- ``HttpError(status, type, message, headers)``: an error response with a JSON error body.

Blocks: ``Text``, ``Thinking`` (with signature), ``RedactedThinking``, ``ToolUse``.

Every request is recorded (``fake.requests``: method, path, lower-cased headers, JSON body).
Unless ``strict=False``, a request that breaks the API's rules (roles, tool_use/tool_result
pairing, empty text, thinking budget, cache breakpoints...) is answered with a 400
invalid_request_error whose message starts with "fake_anthropic:", and recorded with
``rejected`` set: stricter than the real API in one way, consecutive messages of the same
role are rejected too. With no reply left in the queue the answer is a 400 as well.

The parts: ``script`` (what to answer), ``sse`` (how an answer looks on the wire), ``validate``
(what the real API would reject), ``server`` (the HTTP server). Tests import from the package.
"""

from __future__ import annotations

from fake_anthropic.script import (
    Block,
    HttpError,
    JsonDict,
    RedactedThinking,
    Reply,
    ScriptItem,
    Text,
    Thinking,
    ToolUse,
    tool_round,
)
from fake_anthropic.server import HANG_LIMIT, FakeAnthropic, RecordedRequest
from fake_anthropic.sse import message_body, sse_events
from fake_anthropic.validate import validate_request

__all__ = [
    "HANG_LIMIT",
    "Block",
    "FakeAnthropic",
    "HttpError",
    "JsonDict",
    "RecordedRequest",
    "RedactedThinking",
    "Reply",
    "ScriptItem",
    "Text",
    "Thinking",
    "ToolUse",
    "message_body",
    "sse_events",
    "tool_round",
    "validate_request",
]
