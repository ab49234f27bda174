"""Tools the host implements: offered to the model like built-in ones, run by the host.

The arguments are checked against the host's JSON Schema (with ``jsonschema``) as the loop
validates them, so a call the schema forbids never reaches the host, and the model reads why.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict, model_validator

from rpc_agent.agent.host import ClientToolSpec, Host
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.tools.base import Tool, ToolContext, ToolOutput


class _HostArgs(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    schema_validator: ClassVar[Any] = None

    @model_validator(mode="before")
    @classmethod
    def _check_schema(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError("the arguments must be an object")
        errors = sorted(cls.schema_validator.iter_errors(data), key=lambda e: list(e.path))
        if errors:
            raise ValueError(
                "; ".join(f"{'/'.join(map(str, e.path)) or '(arguments)'}: {e.message}" for e in errors[:5])
            )
        return data


class ClientToolBase:
    """One host tool; each declared tool gets a subclass carrying its name and schema."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[JsonSchema]
    read_only: ClassVar[bool]
    Args: ClassVar[type[BaseModel]]

    def __init__(self, host: Host) -> None:
        self.host = host

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput:
        arguments = args.model_dump() if isinstance(args, BaseModel) else dict(args)
        answer = await self.host.call_client_tool(ctx.tool_call_id, self.name, arguments)
        return ToolOutput(content=answer.content, details=answer.details, is_error=answer.is_error)


def check_schema(parameters: JsonSchema) -> str | None:
    """Why a declared schema is itself invalid, or None.

    jsonschema is imported here, not at the top: it costs more than the server's whole start-up
    and only a client that declares tools needs it.
    """
    import jsonschema

    try:
        # a plain dict copy: jsonschema's stubs type check_schema's argument as a dict
        jsonschema.validators.validator_for(parameters).check_schema(dict(parameters))
    except jsonschema.SchemaError as exc:
        return exc.message
    return None


def make_client_tool(spec: ClientToolSpec, host: Host) -> Tool:
    import jsonschema

    validator_class = jsonschema.validators.validator_for(spec.parameters)
    args = type(
        f"{spec.name}_Args",
        (_HostArgs,),
        {"schema_validator": validator_class(spec.parameters), "__module__": __name__},
    )
    cls = type(
        f"ClientTool_{spec.name}",
        (ClientToolBase,),
        {
            "name": spec.name,
            # The system prompt lists each tool by the first line of its description.
            "description": spec.description.strip() or f"{spec.name}: a tool the client provides.",
            "parameters": spec.parameters,
            "read_only": spec.read_only,
            "Args": args,
        },
    )
    return cast(Tool, cls(host))
