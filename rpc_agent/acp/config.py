"""The session's config options (ACP's ``configOptions``): model, thinking level, approval, and
the sandbox of the agent's commands (mode and network).

Every answer that opens a session, and every ``session/set_config_option``, carries the whole
list with the current values, so the editor's pickers always show what the agent uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from acp.schema import SessionConfigOptionBoolean, SessionConfigOptionSelect, SessionConfigSelectOption

from acp import RequestError
from rpc_agent.acp.permissions import APPROVAL_POLICIES
from rpc_agent.acp.session_state import AcpSession
from rpc_agent.agent.agent_session import THINKING_LEVELS
from rpc_agent.agent.policy import ApprovalMode
from rpc_agent.errors import InvalidRequestError, SettingsError

ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean


def config_options(session: AcpSession) -> list[ConfigOption]:
    agent = session.agent
    models = agent.provider.models()
    model_options = [SessionConfigSelectOption(value=model.id, name=model.name) for model in models]
    if agent.model.id not in {model.id for model in models}:
        model_options.insert(0, SessionConfigSelectOption(value=agent.model.id, name=agent.model.name))
    return [
        SessionConfigOptionSelect(
            type="select",
            id="model",
            name="Model",
            category="model",
            current_value=agent.model.id,
            options=model_options,
        ),
        SessionConfigOptionSelect(
            type="select",
            id="thinking_level",
            name="Thinking level",
            category="thought_level",
            current_value=agent.thinking_level,
            options=[SessionConfigSelectOption(value=level, name=level) for level in THINKING_LEVELS],
        ),
        SessionConfigOptionSelect(
            type="select",
            id="approval_policy",
            name="Approval",
            description="When to ask before a tool runs",
            category="mode",
            current_value=session.policy.mode,
            options=_described(APPROVAL_POLICIES),
        ),
        SessionConfigOptionSelect(
            type="select",
            id="sandbox",
            name="Sandbox",
            description="Where the agent's commands may write (bubblewrap); credentials are hidden",
            current_value=agent.sandbox.policy.mode,
            options=_described(SANDBOX_MODES),
        ),
        SessionConfigOptionSelect(
            type="select",
            id="sandbox_network",
            name="Sandbox network",
            description="Whether sandboxed commands reach the network",
            current_value=agent.sandbox.policy.network,
            options=[SessionConfigSelectOption(value=value, name=value) for value in ("allow", "deny")],
        ),
    ]


_Value = TypeVar("_Value", bound=str)


def _described(choices: Mapping[_Value, tuple[str, str]]) -> list[SessionConfigSelectOption]:
    """Options of a select whose every value has a name and a one-line description."""
    return [
        SessionConfigSelectOption(value=value, name=name, description=description)
        for value, (name, description) in choices.items()
    ]


SANDBOX_MODES = {
    "off": ("Off", "Commands run with your rights"),
    "read-only": ("Read-only", "Commands write only a temp folder of their own"),
    "workspace-write": ("Workspace", "Commands write the project folder and a temp folder"),
}
"""The sandbox modes as the editor shows them. With a sandbox on, bash runs in bubblewrap on
this machine, not in the editor's terminal (which the sandbox could not fence)."""


async def set_config_option(session: AcpSession, config_id: str, value: str | bool) -> None:
    """Change one option; an unknown option or value is the client's mistake."""
    try:
        if config_id == "model" and isinstance(value, str):
            await session.agent.set_model(value)
        elif config_id == "thinking_level" and isinstance(value, str):
            await session.agent.set_thinking_level(value)
        elif config_id == "approval_policy" and (mode := _approval_mode(value)) is not None:
            session.policy.mode = mode
        elif config_id == "sandbox" and isinstance(value, str):
            session.agent.set_sandbox(value, None)
        elif config_id == "sandbox_network" and isinstance(value, str):
            session.agent.set_sandbox(None, value)
        else:
            raise RequestError.invalid_params({"details": f"unknown config option {config_id}={value!r}"})
    except (InvalidRequestError, SettingsError, ValueError, KeyError) as exc:
        raise RequestError.invalid_params({"details": str(exc)}) from exc


def _approval_mode(value: str | bool) -> ApprovalMode | None:
    return next((mode for mode in APPROVAL_POLICIES if mode == value), None)
