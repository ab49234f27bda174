"""Claude through the official ``anthropic`` SDK.

The parts: ``sdk`` (the SDK imported off the start-up path), ``errors`` (classification for the
retry policy), ``partial_json`` (streamed tool arguments), ``stream`` (assembling our message
from the SDK's events) and ``provider`` (the client and the Provider protocol).
"""

from rpc_agent.providers.anthropic.errors import classify_error
from rpc_agent.providers.anthropic.partial_json import PartialJson
from rpc_agent.providers.anthropic.provider import AnthropicProvider
from rpc_agent.providers.anthropic.sdk import warm_up

__all__ = ["AnthropicProvider", "PartialJson", "classify_error", "warm_up"]
