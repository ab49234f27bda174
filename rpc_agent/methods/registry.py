"""The method table: each method's handler, its params and result models, and how a request's
params become the params model (objects by name, arrays by position)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from rpc_agent.methods.errors import RpcError
from rpc_agent.protocol.errors import INVALID_PARAMS
from rpc_agent.quoting import bound


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()
"""The params of a request that has no params member (not the same as ``null``)."""


ModelSource = type[BaseModel] | Callable[[], type[BaseModel] | None] | None
"""A method's params or result model as given to the registry: the model, None, or a function
that gives the model when it is first needed (``protocol.table`` names its models, and the
first request of a method imports them, not the start of the server)."""


class MethodSpec:
    """One method: its handler and the models a protocol generator publishes for it."""

    __slots__ = (
        "_defaults_only",
        "_params",
        "_positional",
        "_result",
        "accepted",
        "description",
        "handler",
        "inline",
        "name",
    )

    def __init__(
        self,
        name: str,
        handler: Callable[[Any], Any],
        params: ModelSource,
        result: ModelSource,
        inline: bool,
        description: str,
        accepted: Callable[[Any], None] | None = None,
    ) -> None:
        self.name = name
        self.handler = handler
        self.inline = inline
        self.description = description
        self.accepted = accepted
        """Called with the params when a request is handed to its task, before the task runs: a
        request read before an ``abort`` in the same read is known to the agent at that moment."""
        self._params = params
        self._result = result
        self._positional: tuple[str, ...] | None = None
        self._defaults_only: bool | None = None

    def __repr__(self) -> str:
        return f"MethodSpec(name={self.name!r}, inline={self.inline!r})"

    @property
    def params(self) -> type[BaseModel] | None:
        """The params model (None: the method takes no params), imported on first use."""
        model = self._params = _loaded(self._params)
        return model

    @property
    def result(self) -> type[BaseModel] | None:
        model = self._result = _loaded(self._result)
        return model

    @property
    def positional(self) -> tuple[str, ...]:
        """Keys that positional params (a JSON array) map to, in order: the params model's fields."""
        if self._positional is None:
            model = self.params
            fields = model.model_fields.items() if model is not None else ()
            self._positional = tuple(info.alias or key for key, info in fields)
        return self._positional

    def _takes_defaults_only(self, model: type[BaseModel]) -> bool:
        if self._defaults_only is None:
            self._defaults_only = not any(info.is_required() for info in model.model_fields.values())
        return self._defaults_only

    def parse_params(self, raw: Any) -> BaseModel | None:
        """Validated params (``raw`` is the request's params member, or absent); RpcError(-32602)."""
        model = self.params
        if model is None:
            if raw is MISSING or raw == {} or raw == []:
                return None
            if isinstance(raw, dict | list):
                raise RpcError(INVALID_PARAMS, f"Invalid params: {self.name} takes no params")
            raise RpcError(INVALID_PARAMS, _params_type_message(raw))
        if raw is MISSING:
            if self._takes_defaults_only(model):
                # Imported here: the server package is the transport and dispatch alone, and
                # the builders bring every event model with them.
                from rpc_agent.protocol.builders import defaults

                return defaults(model)
            raw = {}
        elif type(raw) is list:
            if len(raw) > len(self.positional):
                raise RpcError(
                    INVALID_PARAMS,
                    f"Invalid params: {self.name} takes at most {len(self.positional)} positional params "
                    f"({', '.join(self.positional)}), got {len(raw)}",
                )
            raw = dict(zip(self.positional, raw, strict=False))
        elif type(raw) is not dict:
            raise RpcError(INVALID_PARAMS, _params_type_message(raw))
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            count = exc.error_count()
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params for {self.name}: {count} validation error{'s' if count != 1 else ''}",
                bound(exc.errors(include_url=False)),
            ) from exc

    async def invoke(self, raw: Any) -> Any:
        """Validate ``raw`` params, run the handler, and return the result in wire shape: the
        same path a request takes, for fronts that reach the table another way (ACP's
        extension methods). Raises RpcError for bad params; the handler's own errors pass."""
        value = self.handler(self.parse_params(raw))
        if inspect.isawaitable(value):
            value = await value
        return dump_result(self.name, value)


def _loaded(source: ModelSource) -> type[BaseModel] | None:
    """The model a table entry names, imported by its loader the first time it is asked for."""
    return source() if source is not None and not isinstance(source, type) else source


_JSON_KINDS = {str: "a string", int: "a number", float: "a number", bool: "a boolean", type(None): "null"}


def _params_type_message(raw: Any) -> str:
    kind = _JSON_KINDS.get(type(raw), type(raw).__name__)
    return f"Invalid params: params must be an object or an array, not {kind}"


class MethodRegistry:
    """The methods a router serves, in registration order.

    A handler takes the validated params model (``None`` when the method declares
    ``params=None``; an absent ``params`` member is validated as ``{}``) and returns a pydantic
    model (or ``None``, answered as ``{}``). Inline handlers are plain functions that must not
    block or wait; the others are async and each call runs in its own task.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, MethodSpec] = {}

    def add(
        self,
        name: str,
        handler: Callable[[Any], Any],
        *,
        params: ModelSource,
        result: ModelSource,
        inline: bool = False,
        description: str = "",
        accepted: Callable[[Any], None] | None = None,
    ) -> MethodSpec:
        if name in self._by_name:
            raise ValueError(f"method {name!r} is already registered")
        if inline and inspect.iscoroutinefunction(handler):
            raise TypeError(f"inline method {name!r} needs a plain function, got a coroutine function")
        spec = MethodSpec(name, handler, params, result, inline, description, accepted)
        self._by_name[name] = spec
        return spec

    @property
    def methods(self) -> list[MethodSpec]:
        """Every method, in registration order (what the protocol generator documents)."""
        return list(self._by_name.values())

    def get(self, name: str) -> MethodSpec | None:
        return self._by_name.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self._by_name)


def dump_result(method: str, value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=False)
    if value is None:
        return {}
    if isinstance(value, dict | orjson.Fragment):
        # A hot handler (get_state) may return its result already in wire shape; the
        # registered result model still documents it.
        return value
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()  # no "never awaited" warning on top of the real error
        raise TypeError(f"inline handler of {method} returned an awaitable; register it without inline=True")
    raise TypeError(f"handler of {method} returned {type(value).__name__}, not a pydantic model or a dict")
