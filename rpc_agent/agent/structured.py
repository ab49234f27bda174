"""Answers in a schema: a run that must end with a final answer matching the caller's JSON Schema.

The answer is obtained the robust way: the run offers one more tool, ``structured_output``,
whose input schema is the caller's, so the provider's API itself constrains what the model
writes. The run ends when the model calls it with input that validates; an answer that does not
validate comes back to the model as a tool error naming what is wrong, and a turn that ends
without calling the tool gets a reminder (a custom message, stored like any other) and, where
the provider can, a forced ``tool_choice`` on the next call. Both count against one bound
(``MAX_REASKS``); past it the run stops with stopReason ``invalid_output`` and the last reason.

The Messages API takes only object schemas as a tool's input: any other schema (an array, a
string) is wrapped as ``{"answer": <schema>}`` for the model and unwrapped for the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict

from rpc_agent.agent.queue import QueuedCustom
from rpc_agent.errors import InvalidRequestError
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.protocol.shapes import BlockDict
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput

TOOL_NAME = "structured_output"
MAX_REASKS = 3
"""How many times a run is re-asked for a valid answer after its first try."""
INVALID_OUTPUT = "invalid_output"
"""The stop reason of a run that never produced an answer matching the schema."""
WRAPPED_KEY = "answer"
REMINDER = (
    "You have not given your final answer yet. Call the structured_output tool now with your "
    "final answer; its input must match the required output schema."
)


def check_output_schema(schema: object) -> JsonSchema:
    """The schema itself checked (before any run): raises InvalidRequestError naming the fault.

    jsonschema is imported here: it costs more than the server's start-up, and only a run
    with an output schema needs it.
    """
    import jsonschema

    if not isinstance(schema, dict):
        raise InvalidRequestError(f"the output schema must be a JSON object, not {type(schema).__name__}")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "(root)"
        raise InvalidRequestError(
            f"the output schema is not a valid JSON Schema: {where}: {exc.message}"
        ) from None
    return cast(JsonSchema, schema)


def tool_input_schema(schema: JsonSchema) -> tuple[JsonSchema, bool]:
    """The schema the model sees, and whether it wraps the caller's (see the module docstring)."""
    if schema.get("type") == "object":
        return schema.copy(), False
    inner = schema.copy()
    wrapper: JsonSchema = {
        "type": "object",
        "properties": {WRAPPED_KEY: inner},
        "required": [WRAPPED_KEY],
        "additionalProperties": False,
    }
    # references stay resolvable from the wrapper's root
    if "$defs" in inner:
        wrapper["$defs"] = inner.pop("$defs")
    if "definitions" in inner:
        wrapper["definitions"] = inner.pop("definitions")
    return wrapper, True


def _validation_error(validator: Any, value: Any) -> str | None:
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    return "; ".join(
        f"{'/'.join(str(p) for p in e.absolute_path) or '(answer)'}: {e.message}" for e in errors[:5]
    )


class _AnyObject(BaseModel):
    """Takes any object: the caller's schema is checked in ``execute``, where a miss is counted.

    Built by the first structured run (``defer_build``), not by start-up, which imports it."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class StructuredRun:
    """One run's demand for an answer in a schema: its tool, and where the answer stands."""

    def __init__(self, schema: JsonSchema) -> None:
        import jsonschema

        self.schema = schema
        self.validator = jsonschema.validators.validator_for(schema)(schema)
        self.parameters, self.wrapped = tool_input_schema(schema)
        self.value: Any = None
        self.done = False
        self.misses = 0
        """Turns that ended without a valid answer (an invalid call, or no call)."""
        self.last_error: str | None = None
        self._invalid_this_turn = False

    def tool(self) -> StructuredOutputTool:
        return StructuredOutputTool(self)

    def accept(self, arguments: Mapping[str, Any]) -> str | None:
        """Record an answer; why it does not match the schema, or None when it is kept."""
        value = arguments.get(WRAPPED_KEY) if self.wrapped else arguments
        if self.wrapped and WRAPPED_KEY not in arguments:
            error: str | None = f"(arguments): '{WRAPPED_KEY}' is a required property"
        else:
            error = _validation_error(self.validator, value)
        if error is not None:
            self.last_error = error
            self._invalid_this_turn = True
            return error
        self.value, self.done = value, True
        return None

    def settle(self, calls: list[BlockDict]) -> Verdict:
        """After a turn: whether the run ends here (answered, or out of re-asks), and if not,
        how the next turn is asked.

        A turn without a call of the tool and without other calls is re-asked with a reminder
        (stored before the next call) and the tool forced where the provider allows it.
        """
        if self.done:
            return Verdict(ends=True)
        if self._invalid_this_turn or not calls:
            self.misses += 1
        if not calls:
            self.last_error = self.last_error or "the model ended its turn without calling structured_output"
        self._invalid_this_turn = False
        if self.misses > MAX_REASKS:
            return Verdict(
                ends=True,
                error=f"no answer matching the output schema after {self.misses} attempts: {self.last_error}",
            )
        return Verdict(ends=False, force_tool=self.misses > 0, remind=not calls)


@dataclass(frozen=True)
class Verdict:
    """What the loop does after a turn of a run that must answer in a schema."""

    ends: bool
    error: str | None = None
    """Why the run ends without a valid answer (its stop reason is ``invalid_output``)."""
    force_tool: bool = False
    """Force the final-answer tool on the next call (``tool_choice``)."""
    remind: bool = False
    """Store the reminder to call the tool before the next call."""

    def reminder(self) -> QueuedCustom:
        return {"customType": TOOL_NAME, "content": REMINDER, "display": True}


class StructuredOutputTool:
    """The final-answer tool, offered only to a run that asked for an answer in a schema."""

    name: ClassVar[str] = TOOL_NAME
    description: ClassVar[str] = (
        "Give your final answer. Call this exactly once, when you are done, with the answer as "
        "the input; the input must match the schema. The run ends when an answer is accepted."
    )
    Args: ClassVar[type[BaseModel]] = _AnyObject
    read_only: ClassVar[bool] = True

    def __init__(self, run: StructuredRun) -> None:
        self.run = run
        self.parameters: JsonSchema = run.parameters

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput:
        arguments = dict(args.__pydantic_extra__ or {}) if isinstance(args, BaseModel) else dict(args)
        error = self.run.accept(arguments)
        if error is not None:
            raise ToolError(
                f"The answer does not match the output schema: {error}. "
                "Call structured_output again with a corrected answer."
            )
        return ToolOutput.text("Answer accepted.")
