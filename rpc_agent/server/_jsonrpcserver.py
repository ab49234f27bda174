"""The parts of jsonrpcserver the router uses, imported without its package ``__init__``.

``import jsonrpcserver`` runs its ``__init__``, which loads its default request validator
(jsonschema, with a schema read from package data) and its toy HTTP server (http.server): about
0.1 s here, half of the server's 200 ms budget from spawn to the ``initialize`` response, for
two things the router never uses (it classifies requests itself and speaks stdio). The pieces
it does use (the response types and their serializers) live in submodules that import neither,
so we load those under a placeholder parent package and then take the placeholder and those
submodules back out of ``sys.modules``: a later ``import jsonrpcserver`` anywhere else gets the
whole, ordinary package, and the router keeps its private copy of three small modules. If the
real package is already imported, it is simply used.
"""

from __future__ import annotations

import importlib.util
import sys
import types
import warnings


def _placeholder_parent() -> types.ModuleType | None:
    if "jsonrpcserver" in sys.modules:
        return None
    spec = importlib.util.find_spec("jsonrpcserver")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("jsonrpcserver is not installed")
    parent = types.ModuleType("jsonrpcserver", "placeholder while rpc_agent loads jsonrpcserver submodules")
    parent.__path__ = list(spec.submodule_search_locations)
    sys.modules["jsonrpcserver"] = parent
    return parent


_parent = _placeholder_parent()
try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from jsonrpcserver.response import ErrorResponse, SuccessResponse, serialize_error, serialize_success
        from jsonrpcserver.sentinels import NODATA
finally:
    if _parent is not None:
        for _name in [name for name in sys.modules if name.partition(".")[0] == "jsonrpcserver"]:
            del sys.modules[_name]
    del _parent

__all__ = ["NODATA", "ErrorResponse", "SuccessResponse", "serialize_error", "serialize_success"]
