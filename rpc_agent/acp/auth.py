"""How an editor learns that the agent needs credentials, and which ones.

ACP's answer to a missing key is the ``auth_required`` error (-32000) together with the
``authMethods`` advertised by ``initialize``: the editor can then tell the user what to set,
where a generic "Internal error" leaves them guessing. The Anthropic provider reads its key
from the environment, so its one method is an environment-variable method: the client sets the
variable and starts the agent again.
"""

from __future__ import annotations

from acp.schema import AuthEnvVar, EnvVarAuthMethod

from acp import RequestError

from ..providers.base import Provider

ANTHROPIC_KEY_METHOD = "anthropic-api-key"

_ANTHROPIC = EnvVarAuthMethod(
    type="env_var",
    id=ANTHROPIC_KEY_METHOD,
    name="Anthropic API key",
    description="Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway) in the agent's "
    "environment and start it again.",
    vars=[AuthEnvVar(name="ANTHROPIC_API_KEY", label="Anthropic API key", secret=True)],
    link="https://console.anthropic.com/settings/keys",
)


def auth_methods(provider: Provider) -> list[EnvVarAuthMethod]:
    """The methods ``initialize`` advertises (none for a provider that needs no credentials)."""
    return [_ANTHROPIC] if provider.name == "anthropic" else []


def is_configured(provider: Provider) -> bool:
    check = getattr(provider, "is_configured", None)
    return bool(check()) if callable(check) else True


def require_credentials(provider: Provider) -> None:
    """Raise ACP's ``auth_required`` when the provider has no credentials to run with."""
    if not is_configured(provider):
        methods = [method.id for method in auth_methods(provider)]
        raise RequestError.auth_required(
            {
                "details": "No credentials for the anthropic provider: set ANTHROPIC_API_KEY "
                "(or ANTHROPIC_AUTH_TOKEN) in the agent's environment.",
                "authMethods": methods,
            }
        )


def authenticate(provider: Provider, method_id: str) -> None:
    """``authenticate``: only an advertised method, and only once its variable is set."""
    known = {method.id for method in auth_methods(provider)}
    if method_id not in known:
        raise RequestError.invalid_params(
            {"details": f"unknown authentication method {method_id!r}", "authMethods": sorted(known)}
        )
    require_credentials(provider)
