"""Every params, result and event of the wire protocol, as pydantic models.

This package is the single source of the protocol: the JSON Schema and the reference in the
top-level ``protocol/`` folder are generated from it (``python -m rpc_agent.protocol.generate``)
and a test fails when they are stale.
"""

PROTOCOL_VERSION = "1.0"
