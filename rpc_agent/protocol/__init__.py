"""Every params, result and event of the wire protocol, as pydantic models.

This package is the single source of the protocol: the JSON Schema and the reference in the
top-level ``protocol/`` folder are generated from it (``python -m rpc_agent.protocol.generate``)
and a test fails when they are stale.

The model modules do without ``from __future__ import annotations``: every server start creates
their hundred-odd classes, and pydantic would compile and evaluate each annotation string to
build them; written as real types (quoted only where a class is named before it is defined),
there is nothing to evaluate. The typed-dict modules (``shapes``, ``state_shapes``, ``jsonrpc``,
``json_schema``) do without it too: a TypedDict turns each string annotation into a forward
reference, compiling it, when its class is made at start-up.
"""

PROTOCOL_VERSION = "1.0"
