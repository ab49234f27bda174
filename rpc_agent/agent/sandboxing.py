"""A session's sandbox: the policy in force, the commands' own temp folder, and the host's
say on running one refused command outside it.

The policy comes from the settings (flags, settings files) and may be replaced by the client
(``initialize``/``new_session`` params, the ACP config option); a mode that cannot be provided
here is refused with the reason, never dropped in silence.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import BaseModel

from rpc_agent.agent.host import Host
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.host import ApprovalPreview, ApprovalRequestParams
from rpc_agent.protocol.state_shapes import SandboxStateDict
from rpc_agent.sandbox import Sandbox, SandboxPolicy, SandboxUnavailableError, bwrap
from rpc_agent.store.files import agent_home


def require_available(policy: SandboxPolicy) -> None:
    """Raise SandboxUnavailableError when ``policy`` needs a sandbox that cannot run here."""
    if not policy.active:
        return
    reason = bwrap.unavailable_reason()
    if reason is not None:
        raise SandboxUnavailableError(f"the sandbox mode {policy.mode!r} was asked for, but {reason}")


class SessionSandbox:
    def __init__(self, policy: SandboxPolicy, home: Path | None) -> None:
        self.policy = policy
        self._home = home
        self._temp: Path | None = None

    def set(self, policy: SandboxPolicy) -> None:
        require_available(policy)
        self.policy = policy

    def for_tools(self, cwd: Path, additional: tuple[Path, ...] = ()) -> Sandbox | None:
        """The sandbox the next tool call runs in (None when the mode is ``off``)."""
        if not self.policy.active:
            return None
        if self._temp is None or not self._temp.is_dir():
            self._temp = Path(tempfile.mkdtemp(prefix="rpc-agent-sandbox-"))
        user_home = os.environ.get("HOME")
        return Sandbox.build(
            self.policy,
            cwd=cwd,
            additional=additional,
            agent_home=self._home or agent_home(),
            home=Path(user_home) if user_home else None,
            temp_dir=self._temp,
        )

    def state_json(self) -> SandboxStateDict:
        policy = self.policy
        return {
            "mode": policy.mode,
            "network": policy.network,
            "hideCredentials": policy.hide_credentials,
            "mechanism": "bubblewrap" if policy.active else None,
        }

    def close(self) -> None:
        """Remove the commands' temp folder (with the session)."""
        temp, self._temp = self._temp, None
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


def escape_asker(
    host: Host, call_id: str, cwd: Path, policy: SandboxPolicy, emit: Callable[[BaseModel], None]
) -> Callable[[str], Awaitable[bool]] | None:
    """How a refused command asks to run once outside the sandbox: an ``approval/request`` with
    ``sandbox: "escape"`` to a host that declared approvals (None: nobody to ask). The answer
    is announced as an ``approval`` event, as the approval policy's are."""
    if not host.capabilities.approvals:
        return None

    async def ask(command: str) -> bool:
        preview: ApprovalPreview = {"command": command, "cwd": str(cwd), "sandbox": policy.describe()}
        question = ApprovalRequestParams(
            toolCallId=call_id,
            toolName="bash",
            arguments={"command": command},
            preview=preview,
            sandbox="escape",
        )
        answer = await host.request_approval(question)
        allowed = answer is not None and answer.decision in ("allow", "allow_always")
        reason = f"run outside the sandbox ({policy.describe()})"
        if answer is not None and answer.message:
            reason = f"{reason}: {answer.message}"
        emit(
            ev.ApprovalEvent(
                toolCallId=call_id,
                toolName="bash",
                decision="allow" if allowed else "deny",
                source="client" if answer is not None else "no_answer",
                reason=reason,
            )
        )
        return allowed

    return ask
