"""What the SDK (or httpx2 under it) raised, classified for the agent loop's retry policy."""

from __future__ import annotations

import email.utils
import re
import sys
import time
from typing import Any

from rpc_agent.errors import ProviderError

__all__ = ["classify_error"]

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
