"""The session's config options (ACP's ``configOptions``): model, thinking level, approval, and
the sandbox of the agent's commands (mode and network).

Every answer that opens a session, and every ``session/set_config_option``, carries the whole
list with the current values, so the editor's pickers always show what the agent uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
        _select("model", "Model", agent.model.id, model_options, category="model"),
        _select(
            "thinking_level",
            "Thinking level",
            agent.thinking_level,
            _plain(THINKING_LEVELS),
            category="thought_level",
        ),
        _select(
            "approval_policy",
            "Approval",
            session.policy.mode,
            _described(APPROVAL_POLICIES),
            "When to ask before a tool runs",
            category="mode",
        ),
        _select(
            "sandbox",
            "Sandbox",
            agent.sandbox.policy.mode,
            _described(SANDBOX_MODES),
            "Where the agent's commands may write (bubblewrap); credentials are hidden",
        ),
        _select(
            "sandbox_network",
            "Sandbox network",
            agent.sandbox.policy.network,
            _plain(("allow", "deny")),
            "Whether sandboxed commands reach the network",
        ),
    ]


def _select(
    option_id: str,
    name: str,
    current: str,
    options: list[SessionConfigSelectOption],
    description: str | None = None,
    *,
    category: str | None = None,
) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        type="select",
        id=option_id,
        name=name,
        description=description,
        category=category,
        current_value=current,
        options=options,
    )


def _plain(values: Iterable[str]) -> list[SessionConfigSelectOption]:
    """Options of a select whose values are their own names."""
    return [SessionConfigSelectOption(value=value, name=value) for value in values]


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
