"""The sandbox on the wire: what a client may ask for, and what ``get_state`` reports."""

from typing import Literal

from pydantic import Field

from rpc_agent.protocol.base import Params, Result

SandboxMode = Literal["off", "read-only", "workspace-write"]
SandboxNetwork = Literal["allow", "deny"]


class SandboxRequest(Params):
    mode: SandboxMode | None = Field(
        default=None,
        description="off: the user's rights; read-only: write only an own temp folder; "
        "workspace-write: also the cwd and the additional directories",
    )
    network: SandboxNetwork | None = Field(
        default=None, description="deny: no network for commands (the default once a mode is on)"
    )


class SandboxState(Result):
    mode: SandboxMode = "off"
    network: SandboxNetwork = "allow"
    hideCredentials: bool = Field(
        default=True, description="~/.ssh, ~/.aws, ~/.config/gcloud, ~/.netrc hidden ($RPC_AGENT_HOME always)"
    )
    mechanism: Literal["bubblewrap"] | None = Field(default=None, description="what enforces it (None: off)")
