"""Run-time settings of an AgentSession (what the settings methods change) and their files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rpc_agent.errors import SettingsError
from rpc_agent.protocol.entries import ThinkingLevel
from rpc_agent.sandbox import SandboxPolicy, tighter
from rpc_agent.sandbox.policy import chosen
from rpc_agent.settings_files import read_each
from rpc_agent.tools.environment import EnvironmentPolicy


@dataclass(slots=True)
class RetrySettings:
    enabled: bool = True
    max_attempts: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60_000


@dataclass(slots=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = 16_384
    keep_recent_tokens: int = 20_000


@dataclass(slots=True)
class CheckpointSettings:
    """Workspace checkpoints (``rpc_agent.checkpoints``): on by default."""

    enabled: bool = True
    max_file_size: int = 10 * 1024 * 1024
    """Files larger than this (bytes) are left out of snapshots, and said so."""
    max_files: int = 100_000
    """A working directory with more files is not checkpointed (an event says why)."""


@dataclass(slots=True)
class AgentSettings:
    steering_mode: str = "one-at-a-time"
    follow_up_mode: str = "one-at-a-time"
    retry: RetrySettings | None = None
    compaction: CompactionSettings | None = None
    max_turns: int = 200
    """Safety stop for a runaway tool loop."""
    shell_environment: EnvironmentPolicy = field(default_factory=EnvironmentPolicy)
    """What tool processes inherit of the server's environment (no credentials by default)."""
    approval: str | None = None
    """never | writes | all; None: writes when the client declared approvals, else never."""
    allow_rules: list[str] = field(default_factory=list)
    deny_rules: list[str] = field(default_factory=list)
    prompt_max_turns: int | None = None
    """The per-prompt turn limit (--max-turns, settings maxTurns): stops with "max_turns"."""
    max_budget_usd: float | None = None
    approval_timeout: float = 300.0
    hook_timeout: float = 30.0
    tool_timeout: float = 600.0
    additional_directories: list[str] = field(default_factory=list)
    """Workspace roots besides the cwd (absolute, checked by ``agent.workspace``): the model is
    told of them and file tools may work there (the sandbox makes them writable too); the cwd
    stays the base of relative paths. Per session: ACP ``additionalDirectories``, JSON-RPC
    ``initialize``/``new_session``. Assigned whole, never changed in place (sessions built from
    one AgentSettings share its lists)."""
    checkpoints: CheckpointSettings = field(default_factory=CheckpointSettings)
    default_thinking_level: str | None = None
    """The level of a session that records none (settings ``defaultThinkingLevel``, as pi's)."""
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    """The kernel sandbox of the commands the agent runs (``rpc_agent.sandbox``)."""

    def __post_init__(self) -> None:
        if self.retry is None:
            self.retry = RetrySettings()
        if self.compaction is None:
            self.compaction = CompactionSettings()


# --- settings files ---------------------------------------------------------------------------


class _FileSection(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)


class CompactionFile(_FileSection):
    enabled: bool | None = None
    reserveTokens: int | None = Field(default=None, ge=0)
    keepRecentTokens: int | None = Field(default=None, ge=0)


class RetryFile(_FileSection):
    enabled: bool | None = None
    maxRetries: int | None = Field(default=None, ge=0)
    baseDelayMs: int | None = Field(default=None, ge=0)
    maxDelayMs: int | None = Field(default=None, ge=0)


class ShellEnvironmentFile(_FileSection):
    """``shellEnvironment``: see :mod:`rpc_agent.tools.environment` for how it applies."""

    inherit: Literal["all", "core", "none"] = "all"
    exclude: list[str] = Field(default_factory=list)
    include: list[str] = Field(default_factory=list)
    set_: dict[str, str] = Field(default_factory=dict, alias="set")

    def policy(self) -> EnvironmentPolicy:
        return EnvironmentPolicy(self.inherit, tuple(self.exclude), tuple(self.include), dict(self.set_))


class CheckpointsFile(_FileSection):
    enabled: bool | None = None
    maxFileSizeBytes: int | None = Field(default=None, ge=0)
    maxFiles: int | None = Field(default=None, ge=0)


class SandboxFile(_FileSection):
    """``sandbox``: see :mod:`rpc_agent.sandbox.policy` for the modes."""

    mode: Literal["off", "read-only", "workspace-write"] | None = None
    network: Literal["allow", "deny"] | None = None
    hideCredentials: bool | None = None


class SettingsFile(_FileSection):
    """``settings.json``: the global one in ``$RPC_AGENT_HOME``, then ``<cwd>/.rpc-agent/``.

    Unknown keys are ignored, so one file can carry settings for other tools too; known keys
    with wrong types are an error that names the file.
    """

    compaction: CompactionFile = Field(default_factory=CompactionFile)
    checkpoints: CheckpointsFile = Field(default_factory=CheckpointsFile)
    retry: RetryFile = Field(default_factory=RetryFile)
    steeringMode: Literal["all", "one-at-a-time"] | None = None
    followUpMode: Literal["all", "one-at-a-time"] | None = None
    shellEnvironment: ShellEnvironmentFile | None = None
    """Honoured in the user's own settings file only (see ``load_settings``)."""
    approval: Literal["never", "writes", "all"] | None = None
    allow: list[str] | None = None
    deny: list[str] | None = None
    maxTurns: int | None = Field(default=None, ge=1)
    maxBudgetUsd: float | None = Field(default=None, gt=0)
    approvalTimeoutSeconds: float | None = Field(default=None, gt=0)
    hookTimeoutSeconds: float | None = Field(default=None, gt=0)
    toolTimeoutSeconds: float | None = Field(default=None, gt=0)
    defaultThinkingLevel: ThinkingLevel | None = None
    sandbox: SandboxFile | None = None
    """The user's file sets it; a project's file may only tighten it (see ``load_settings``)."""


def _apply(settings: AgentSettings, source: SettingsFile) -> None:
    compaction, retry = settings.compaction, settings.retry
    assert compaction is not None
    assert retry is not None
    c, r = source.compaction, source.retry
    compaction.enabled = c.enabled if c.enabled is not None else compaction.enabled
    compaction.reserve_tokens = c.reserveTokens if c.reserveTokens is not None else compaction.reserve_tokens
    compaction.keep_recent_tokens = (
        c.keepRecentTokens if c.keepRecentTokens is not None else compaction.keep_recent_tokens
    )
    retry.enabled = r.enabled if r.enabled is not None else retry.enabled
    retry.max_attempts = r.maxRetries if r.maxRetries is not None else retry.max_attempts
    retry.base_delay_ms = r.baseDelayMs if r.baseDelayMs is not None else retry.base_delay_ms
    retry.max_delay_ms = r.maxDelayMs if r.maxDelayMs is not None else retry.max_delay_ms
    settings.steering_mode = source.steeringMode or settings.steering_mode
    settings.follow_up_mode = source.followUpMode or settings.follow_up_mode
    settings.approval = source.approval or settings.approval
    settings.allow_rules = [*settings.allow_rules, *(source.allow or [])]
    settings.deny_rules = [*settings.deny_rules, *(source.deny or [])]
    settings.prompt_max_turns = source.maxTurns or settings.prompt_max_turns
    settings.max_budget_usd = source.maxBudgetUsd or settings.max_budget_usd
    settings.approval_timeout = source.approvalTimeoutSeconds or settings.approval_timeout
    settings.hook_timeout = source.hookTimeoutSeconds or settings.hook_timeout
    settings.tool_timeout = source.toolTimeoutSeconds or settings.tool_timeout
    cp, checkpoints = source.checkpoints, settings.checkpoints
    checkpoints.enabled = cp.enabled if cp.enabled is not None else checkpoints.enabled
    checkpoints.max_file_size = (
        cp.maxFileSizeBytes if cp.maxFileSizeBytes is not None else checkpoints.max_file_size
    )
    checkpoints.max_files = cp.maxFiles if cp.maxFiles is not None else checkpoints.max_files
    settings.default_thinking_level = source.defaultThinkingLevel or settings.default_thinking_level


def settings_paths(home: Path, cwd: Path) -> list[Path]:
    return [home / "settings.json", cwd / ".rpc-agent" / "settings.json"]


def load_settings(paths: list[Path], overrides: SettingsFile | None = None) -> AgentSettings:
    """Defaults, then each existing file in order, then command-line overrides.

    ``shellEnvironment`` is taken from the first file only, the user's own: a project's
    settings come with the repository, and a repository must not be able to hand the user's
    credentials to the commands the model runs. For the same reason a project's ``sandbox``
    can only tighten the user's (a stricter mode, ``deny``); the command line speaks for the
    user and sets it as it likes.
    """
    settings = AgentSettings()
    files = read_each(
        paths,
        SettingsFile.model_validate_json,
        error=SettingsError,
        unreadable="cannot read settings file {path}",
        invalid="invalid settings file {path}",
    )
    for index, source in files:
        _apply(settings, source)
        if index == 0 and source.shellEnvironment is not None:
            settings.shell_environment = source.shellEnvironment.policy()
        if source.sandbox is not None:
            box = source.sandbox
            if index == 0:
                settings.sandbox = chosen(
                    box.mode, box.network, settings.sandbox, hide_credentials=box.hideCredentials
                )
            else:
                settings.sandbox = tighter(settings.sandbox, box.mode, box.network)
    if overrides is not None:
        _apply(settings, overrides)
        if overrides.sandbox is not None:
            settings.sandbox = chosen(overrides.sandbox.mode, overrides.sandbox.network, settings.sandbox)
    return settings
