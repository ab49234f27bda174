"""The kernel sandbox for what the agent runs (``bash``, the user's ``bash``, ``grep``'s ``rg``).

``policy`` holds the modes and how settings combine, ``bwrap`` turns a policy into a
bubblewrap command line (and says whether bubblewrap works here), ``denials`` explains a
command the sandbox refused. The file tools (write, edit, read) run in the server and ask the
same ``Sandbox`` for the paths it allows.
"""

from rpc_agent.sandbox.policy import (
    CREDENTIAL_PATHS,
    MODES,
    NETWORKS,
    Sandbox,
    SandboxPolicy,
    SandboxUnavailableError,
    tighter,
)

__all__ = [
    "CREDENTIAL_PATHS",
    "MODES",
    "NETWORKS",
    "Sandbox",
    "SandboxPolicy",
    "SandboxUnavailableError",
    "tighter",
]
