"""The ``anthropic`` SDK, imported lazily.

``import anthropic`` takes seconds here, and the server must answer ``initialize`` long before
that: the SDK is imported on the first model call, or earlier in a worker thread by
``warm_up()`` once the server is serving.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import anyio
import anyio.to_thread

from rpc_agent.errors import ProviderNotConfiguredError

__all__ = ["sdk", "warm_up"]


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


async def sdk() -> Any:
    module = sys.modules.get("anthropic")
    if module is None or getattr(module, "AsyncAnthropic", None) is None:
        module = await anyio.to_thread.run_sync(_import_sdk)
    return module
