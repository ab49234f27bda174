"""The method table both fronts serve: a handler per method of the protocol's table, bound to one
AgentSession (``handlers``), the registry that validates params and puts results in wire shape
(``registry``), and the error codes of our errors (``errors``).

The JSON-RPC front serves the whole table; the ACP front serves part of it as ``_rpc_agent/*``
extension methods. Nothing here knows a transport. The package imports nothing at import time,
so that each front loads only the modules it uses.
"""
