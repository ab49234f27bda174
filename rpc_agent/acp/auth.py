"""How an editor logs the user in, and out.

ACP's answer to a missing key is the ``auth_required`` error (-32000) together with the
``authMethods`` advertised by ``initialize``. The current schema has two kinds of method, and
we offer both for the Anthropic provider:

- ``terminal`` (only to a client that declared ``auth.terminal``, as the schema requires): the
  editor runs its own command line for the agent with ``login`` appended in a terminal, where
  ``rpc-agent login`` asks for the key and stores it (``rpc_agent.login``); then it starts the
  agent again, which finds the key.
- ``agent`` (the default type): ``authenticate`` checks that a key is there (the environment's
  or a stored one) and otherwise fails with ``auth_required`` and a message saying to run
  ``rpc-agent login``: the user learns what to do even in a client that knows no terminal
  login. ``authenticate`` with the terminal method's id is answered the same way (a client
  must not send it, but one that does should not be told the method is unknown).

``logout`` forgets the stored key. A key in the environment is the environment's: logout cannot
take it away, and says so in the answer's ``_meta``.
"""

from __future__ import annotations

import os

from acp.schema import AuthMethodAgent, ClientCapabilities, TerminalAuthMethod

from acp import RequestError
from rpc_agent.credentials import CredentialsError, CredentialStore
from rpc_agent.providers.base import Provider

ANTHROPIC_KEY_METHOD = "anthropic-api-key"
TERMINAL_LOGIN_METHOD = "rpc-agent-login"
_ENV_NAMES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

_LOGIN_HINT = (
    "run `rpc-agent login` in a terminal (it asks for the key and keeps it in $RPC_AGENT_HOME/auth.json), "
    "or set ANTHROPIC_API_KEY in the agent's environment, then start the agent again"
)

_TERMINAL = TerminalAuthMethod(
    type="terminal",
    id=TERMINAL_LOGIN_METHOD,
    name="Log in with an Anthropic API key",
    description="Runs `rpc-agent login`, which asks for the key without showing it and keeps it "
    "for every later start of the agent.",
    args=["login"],
)
_AGENT = AuthMethodAgent(
    id=ANTHROPIC_KEY_METHOD,
    name="Anthropic API key",
    description=f"Uses ANTHROPIC_API_KEY or the key stored by `rpc-agent login`; without one, {_LOGIN_HINT}.",
)

AuthMethod = TerminalAuthMethod | AuthMethodAgent


def auth_methods(provider: Provider, client: ClientCapabilities | None) -> list[AuthMethod]:
    """The methods ``initialize`` advertises (none for a provider that needs no credentials)."""
    if provider.name != "anthropic":
        return []
    terminal = client is not None and client.auth is not None and bool(client.auth.terminal)
    return [_TERMINAL, _AGENT] if terminal else [_AGENT]


def is_configured(provider: Provider) -> bool:
    check = getattr(provider, "is_configured", None)
    return bool(check()) if callable(check) else True


def require_credentials(provider: Provider) -> None:
    """Raise ACP's ``auth_required`` when the provider has no credentials to run with."""
    if not is_configured(provider):
        raise RequestError.auth_required(
            {
                "details": f"No credentials for the anthropic provider: {_LOGIN_HINT}.",
                "authMethods": [TERMINAL_LOGIN_METHOD, ANTHROPIC_KEY_METHOD],
            }
        )


def authenticate(provider: Provider, method_id: str) -> None:
    """``authenticate``: a known method succeeds once a key is there."""
    known = {method.id for method in auth_methods(provider, None)}
    if provider.name == "anthropic":
        known.add(TERMINAL_LOGIN_METHOD)
    if method_id not in known:
        raise RequestError.invalid_params(
            {"details": f"unknown authentication method {method_id!r}", "authMethods": sorted(known)}
        )
    require_credentials(provider)


def logout(provider: Provider, store: CredentialStore) -> dict[str, object]:
    """``logout``: forget the stored key; what is left, for the answer's ``_meta``."""
    try:
        removed = store.remove("anthropic")
    except CredentialsError as exc:
        raise RequestError.internal_error({"details": str(exc)}) from exc
    from_environment = provider.name == "anthropic" and any(os.environ.get(name) for name in _ENV_NAMES)
    return {"removedStoredKey": removed, "keyInEnvironment": from_environment}
