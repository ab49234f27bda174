"""Which environment variables the processes a tool starts (bash, rg) get.

The server's own environment holds the provider's credentials. A tool process that inherited
them would let ``printenv ANTHROPIC_API_KEY`` put the key into the session file, the export and
the next request to the model. So tools get the server's environment minus anything that looks
like a secret, the way Codex's ``shell_environment_policy`` does it:

1. ``inherit``: ``all`` (default) starts from the whole environment, ``core`` from the few
   variables a shell needs (PATH, HOME, USER, locale, temp dirs, ...), ``none`` from nothing;
2. names matching :data:`DEFAULT_EXCLUDES` or a pattern of ``exclude`` are dropped;
3. names matching a pattern of ``include`` are passed on from the server's environment whatever
   1 and 2 said (``["ANTHROPIC_API_KEY"]`` hands the key over; ``["*"]`` everything);
4. ``set`` assigns variables last.

Patterns are shell globs (``*``, ``?``, ``[...]``) matched against the whole name, ignoring case.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import translate
from typing import Literal

Inherit = Literal["all", "core", "none"]

DEFAULT_EXCLUDES: tuple[str, ...] = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "*_API_KEY",
    "*_APIKEY",
    "*_ACCESS_KEY",
    "*_PRIVATE_KEY",
    "*SECRET*",
    "*TOKEN",
    "*_TOKEN_*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_CREDENTIALS",
)
"""Names never passed to tools unless ``include`` names them: credentials by their usual names."""

CORE_VARIABLES: tuple[str, ...] = (
    "HOME",
    "LOGNAME",
    "USER",
    "USERNAME",
    "PATH",
    "SHELL",
    "TMPDIR",
    "TEMP",
    "TMP",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "TZ",
)
"""What ``inherit: core`` keeps: enough for a shell, a compiler or git to behave as usual."""


def _matcher(patterns: Iterable[str]) -> re.Pattern[str] | None:
    parts = [translate(pattern.upper()) for pattern in patterns]
    return re.compile("|".join(parts)) if parts else None


@dataclass(frozen=True, slots=True)
class EnvironmentPolicy:
    inherit: Inherit = "all"
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    assign: Mapping[str, str] = field(default_factory=dict)
    """The settings file's ``set``."""

    def environ(self, source: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment for a tool process, built from ``source`` (the server's by default)."""
        if source is None:
            source = os.environ
        core = _matcher(CORE_VARIABLES)
        excluded = _matcher((*DEFAULT_EXCLUDES, *self.exclude))
        included = _matcher(self.include)
        result: dict[str, str] = {}
        for name, value in source.items():
            key = name.upper()
            if included is not None and included.fullmatch(key):
                result[name] = value
                continue
            if self.inherit == "none" or (self.inherit == "core" and not (core and core.fullmatch(key))):
                continue
            if excluded is not None and excluded.fullmatch(key):
                continue
            result[name] = value
        result.update(self.assign)
        return result


DEFAULT_POLICY = EnvironmentPolicy()
