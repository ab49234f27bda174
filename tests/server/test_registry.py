"""The method registry in process: what it lists and refuses, the error codes it publishes, and
what importing the server package loads."""

from __future__ import annotations

import pytest

from child_python import modules_loaded_by
from rpc_agent.server import ERROR_CODES, MethodRegistry
from rpc_agent.server import errors as codes
from server.router_testlib import Params, Result, forever


def test_the_registry_lists_methods_with_their_models_in_order() -> None:
    registry = MethodRegistry()
    registry.add("b_first", lambda _p: None, params=Params, result=Result, inline=True, description="B.")
    registry.add("a_second", forever, params=None, result=None)
    specs = registry.methods
    assert [spec.name for spec in specs] == ["b_first", "a_second"]
    assert (specs[0].params, specs[0].result, specs[0].inline, specs[0].description) == (
        Params,
        Result,
        True,
        "B.",
    )
    assert (specs[1].params, specs[1].result, specs[1].inline) == (None, None, False)
    assert "a_second" in registry
    assert len(registry) == 2
    assert registry.get("nope") is None


def test_a_method_name_can_only_be_registered_once() -> None:
    registry = MethodRegistry()
    registry.add("m", lambda _p: None, params=None, result=None, inline=True)
    with pytest.raises(ValueError, match="already registered"):
        registry.add("m", lambda _p: None, params=None, result=None, inline=True)


def test_an_inline_method_cannot_be_a_coroutine_function() -> None:
    with pytest.raises(TypeError, match="inline"):
        MethodRegistry().add("m", forever, params=None, result=None, inline=True)


def test_positional_params_use_the_wire_names_of_the_fields() -> None:
    spec = MethodRegistry().add("m", lambda _p: None, params=Params, result=None, inline=True)
    assert spec.positional == ("entryId", "limit")
    parsed = spec.parse_params(["e1", 3])
    assert isinstance(parsed, Params)
    assert (parsed.entry_id, parsed.limit) == ("e1", 3)


def test_every_error_code_is_published_once_with_a_description() -> None:
    constants = {
        name: value for name, value in vars(codes).items() if name.isupper() and isinstance(value, int)
    }
    assert {name: info.code for name, info in ERROR_CODES.items()} == constants
    assert len({info.code for info in ERROR_CODES.values()}) == len(ERROR_CODES)
    for name, (code, description) in ERROR_CODES.items():
        assert -32768 <= code <= -32000, name
        assert description
        assert "\n" not in description


def test_importing_the_server_package_stays_cheap() -> None:
    loaded = modules_loaded_by("import rpc_agent.server")
    heavy = ["anthropic", "jsonschema", "http.server", "jsonrpcserver"]
    assert [name for name in heavy if name in loaded] == []
    # Transport and dispatch alone: none of the protocol's models, nothing of the agent.
    models = ("rpc_agent.protocol.events", "rpc_agent.protocol.methods", "rpc_agent.protocol.builders")
    assert [
        name for name in loaded if name in models or name.startswith(("rpc_agent.agent", "rpc_agent.store"))
    ] == []
