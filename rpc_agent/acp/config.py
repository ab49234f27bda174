"""The session's config options (ACP's ``configOptions``): model, thinking level, approval, and
the sandbox of the agent's commands (mode and network).

Every answer that opens a session, and every ``session/set_config_option``, carries the whole
list with the current values, so the editor's pickers always show what the agent uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Literal, TypeVar

from acp.schema import SessionConfigOptionBoolean, SessionConfigOptionSelect, SessionConfigSelectOption

from acp import RequestError
from rpc_agent.acp.permissions import APPROVAL_POLICIES
from rpc_agent.acp.session_state import AcpSession
from rpc_agent.agent.agent_session import THINKING_LEVELS
from rpc_agent.agent.policy import ApprovalMode
from rpc_agent.errors import InvalidRequestError, SettingsError

ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean


@dataclass(frozen=True, slots=True)
class _Picker:
    """The fields of a select that the session does not change, under the ACP model's names:
    what the editor shows of an option beside its current value and choices."""

    id: str
    name: str
    description: str | None = None
    category: Literal["mode", "model", "thought_level"] | None = None


MODEL = _Picker("model", "Model", category="model")
THINKING_LEVEL = _Picker("thinking_level", "Thinking level", category="thought_level")
APPROVAL = _Picker("approval_policy", "Approval", "When to ask before a tool runs", category="mode")
SANDBOX = _Picker(
    "sandbox", "Sandbox", "Where the agent's commands may write (bubblewrap); credentials are hidden"
)
SANDBOX_NETWORK = _Picker(
    "sandbox_network", "Sandbox network", "Whether sandboxed commands reach the network"
)


def config_options(session: AcpSession) -> list[ConfigOption]:
    agent = session.agent
    models = agent.provider.models()
    model_options = [SessionConfigSelectOption(value=model.id, name=model.name) for model in models]
    if agent.model.id not in {model.id for model in models}:
        model_options.insert(0, SessionConfigSelectOption(value=agent.model.id, name=agent.model.name))
    return [
        _select(MODEL, agent.model.id, model_options),
        _select(THINKING_LEVEL, agent.thinking_level, _plain(THINKING_LEVELS)),
        _select(APPROVAL, session.policy.mode, _described(APPROVAL_POLICIES)),
        _select(SANDBOX, agent.sandbox.policy.mode, _described(SANDBOX_MODES)),
        _select(SANDBOX_NETWORK, agent.sandbox.policy.network, _plain(("allow", "deny"))),
    ]


def _select(
    picker: _Picker, current: str, options: list[SessionConfigSelectOption]
) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(type="select", **asdict(picker), current_value=current, options=options)


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
        if config_id == MODEL.id and isinstance(value, str):
            await session.agent.set_model(value)
        elif config_id == THINKING_LEVEL.id and isinstance(value, str):
            await session.agent.set_thinking_level(value)
        elif config_id == APPROVAL.id and (mode := _approval_mode(value)) is not None:
            session.policy.mode = mode
        elif config_id == SANDBOX.id and isinstance(value, str):
            session.agent.set_sandbox(value, None)
        elif config_id == SANDBOX_NETWORK.id and isinstance(value, str):
            session.agent.set_sandbox(None, value)
        else:
            raise RequestError.invalid_params({"details": f"unknown config option {config_id}={value!r}"})
    except (InvalidRequestError, SettingsError, ValueError, KeyError) as exc:
        raise RequestError.invalid_params({"details": str(exc)}) from exc


def _approval_mode(value: str | bool) -> ApprovalMode | None:
    return next((mode for mode in APPROVAL_POLICIES if mode == value), None)
