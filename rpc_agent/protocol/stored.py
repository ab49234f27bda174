"""The fields of events and results that carry what the store and the providers hold.

The agent passes messages and usages along as typed dicts (``protocol.shapes``) and builds the
events that carry them without validation (``protocol.builders``). These fields name those
dicts, so mypy and the code agree on what they hold, while pydantic checks a value given from
outside against the models and publishes the models' schema (``protocol.loose.CheckedAs``).
"""

from typing import Annotated

from rpc_agent.protocol.entries import AgentMessage, Usage
from rpc_agent.protocol.loose import CheckedAs
from rpc_agent.protocol.shapes import MessageDict, UsageDict

StoredMessage = Annotated[MessageDict, CheckedAs(AgentMessage)]
StoredUsage = Annotated[UsageDict, CheckedAs(Usage)]
