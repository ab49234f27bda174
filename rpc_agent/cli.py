"""Command line: flags, then the stdio JSON-RPC server (or, with ``--acp``, the ACP front).

Only what parsing the flags needs is imported at the top: ``--help`` and ``--version`` answer
without loading pydantic or the agent, and the server's modules are loaded by ``main``, after
``command`` took its measures (``tuning``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from rpc_agent import __version__
from rpc_agent.argtypes import positive_float, positive_int

if TYPE_CHECKING:
    from rpc_agent.agent.settings import AgentSettings, SettingsFile
    from rpc_agent.protocol.json_schema import JsonSchema

DESCRIPTION = """\
rpc-agent: a coding agent you drive over stdio with line-delimited JSON-RPC 2.0.

Spawn it, write one JSON-RPC request per line on its stdin, read responses and
"event" notifications (one JSON object per line) from its stdout. Logs go to stderr.
Start with {"jsonrpc":"2.0","id":1,"method":"initialize"} to get the method list.

Conversations are saved as JSONL session files (pi-compatible, version 3) under
$RPC_AGENT_HOME/sessions (default ~/.rpc-agent/sessions), one folder per working directory.
"""

EPILOG = """\
examples:
  rpc-agent --provider faux                 offline, deterministic replies (no API key)
  rpc-agent --continue                      resume the most recent session of this folder
  rpc-agent --session ~/.pi/agent/sessions/--home-me-proj--/x.jsonl
  ANTHROPIC_API_KEY=... rpc-agent --model claude-sonnet-4-5 --thinking medium
  rpc-agent login                           ask for the Anthropic API key (hidden) and keep it in
                                            $RPC_AGENT_HOME/auth.json, used when the environment
                                            has none; rpc-agent logout forgets it
  rpc-agent export SESSION.jsonl [-o OUT.html]
                                            the whole session tree as one HTML page (see
                                            rpc-agent export --help)
  rpc-agent -p "fix the failing test" --approval writes --max-turns 20 --output-format json
  rpc-agent -p "list the TODOs" --output-schema todos.schema.json --output-format json
  rpc-agent batch TASKS.jsonl -o RESULTS.jsonl --jobs 4
                                            many -p runs: resumable, locally or on Ray (see
                                            rpc-agent batch --help)
"""


_FLAGS_AS_GIVEN = (
    "session",
    "continue_recent",
    "no_session",
    "provider",
    "model",
    "thinking",
    "faux_script",
    "system_prompt",
    "append_system_prompt",
)
"""The flags the server's configuration takes as they are, under their own names."""


class SettingsOverride(NamedTuple):
    """A flag that overrides one key of the settings files: ``section.key`` or ``key`` of
    ``settings.json``, so that the flag and the setting it stands for are written together."""

    flag: str
    key: str
    help: str
    value: Callable[[str], object] | None = None
    """How the flag's argument is read; None: a switch that turns the setting off."""
    metavar: str | None = None
    choices: tuple[str, ...] | None = None

    def add_to(self, group: argparse._ActionsContainer) -> None:
        if self.value is None:
            group.add_argument(self.flag, action="store_true", help=self.help)
        else:
            group.add_argument(
                self.flag, type=self.value, metavar=self.metavar, choices=self.choices, help=self.help
            )

    def given(self, args: argparse.Namespace) -> object | None:
        """The setting's value from the parsed flags (None: the flag was not given)."""
        value = getattr(args, self.flag.removeprefix("--").replace("-", "_"), None)
        if self.value is None:
            return False if value else None
        return value


TUNING_OVERRIDES = (
    SettingsOverride("--no-auto-compaction", "compaction.enabled", "never compact on its own"),
    SettingsOverride(
        "--no-checkpoints",
        "checkpoints.enabled",
        "do not snapshot the working directory per entry (settings: checkpoints.enabled)",
    ),
    SettingsOverride(
        "--reserve-tokens", "compaction.reserveTokens", "compact when context > window - N (16384)", int, "N"
    ),
    SettingsOverride(
        "--keep-recent-tokens", "compaction.keepRecentTokens", "keep about N recent tokens (20000)", int, "N"
    ),
    SettingsOverride("--no-auto-retry", "retry.enabled", "do not retry overloaded/5xx/dropped calls"),
    SettingsOverride("--max-retries", "retry.maxRetries", "retries of a transient failure (3)", int, "N"),
    SettingsOverride(
        "--retry-base-delay-ms", "retry.baseDelayMs", "first retry delay, doubling (2000)", int, "MS"
    ),
)
HOST_OVERRIDES = (
    SettingsOverride(
        "--approval",
        "approval",
        "which tool calls need approval (default: writes when the client declared approvals, else never)",
        str,
        choices=("never", "writes", "all"),
    ),
    SettingsOverride("--max-turns", "maxTurns", "stop a prompt's run after N model calls", positive_int, "N"),
    SettingsOverride(
        "--max-budget-usd", "maxBudgetUsd", "stop a prompt's run once it cost $X", positive_float, "X"
    ),
    SettingsOverride(
        "--sandbox",
        "sandbox.mode",
        "run the agent's commands (bash, rg) in a bubblewrap sandbox: read-only writes only "
        "their own temp folder, workspace-write also the cwd; $RPC_AGENT_HOME and ~/.ssh, ~/.aws, "
        '~/.config/gcloud, ~/.netrc are hidden (default: off, or the settings\' "sandbox")',
        str,
        choices=("off", "read-only", "workspace-write"),
    ),
    SettingsOverride(
        "--sandbox-network",
        "sandbox.network",
        "network for sandboxed commands (default: deny once a sandbox mode is on)",
        str,
        choices=("allow", "deny"),
    ),
)
"""The flags that override the settings files, by help section (``overrides_from`` reads them)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rpc-agent",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rpc-agent {__version__}")
    parser.add_argument(
        "command",
        nargs="?",
        choices=["login", "logout"],
        help="login: store the Anthropic API key (asked for on the terminal, or one line of stdin); "
        "logout: forget it. Other flags are ignored, so an editor may append it to its command line",
    )
    parser.add_argument("--cwd", type=Path, help="working directory of the agent (default: the current one)")
    parser.add_argument(
        "--session-dir",
        type=Path,
        help="folder for session files (default: $RPC_AGENT_HOME/sessions/--<cwd>--); pi's folders work too",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--session", type=Path, metavar="PATH", help="open (or create) this session file")
    which.add_argument(
        "--continue", dest="continue_recent", action="store_true", help="resume the most recent session"
    )
    which.add_argument("--no-session", action="store_true", help="keep the conversation in memory only")
    parser.add_argument(
        "--provider",
        choices=["anthropic", "faux"],
        default="anthropic",
        help="model provider: anthropic (needs ANTHROPIC_API_KEY; honours ANTHROPIC_BASE_URL) or faux (offline)",
    )
    parser.add_argument("--model", help="model id (default: the provider's first model)")
    parser.add_argument(
        "--thinking",
        choices=["off", "minimal", "low", "medium", "high", "xhigh", "max"],  # THINKING_LEVELS
        help="thinking level (default: from the session, else off)",
    )
    parser.add_argument(
        "--faux-script", type=Path, metavar="FILE", help="replies for the faux provider (JSON list)"
    )
    parser.add_argument("--no-tools", action="store_true", help="give the model no tools")
    parser.add_argument(
        "--acp",
        action="store_true",
        help="speak the Agent Client Protocol (v1) on stdio instead, for editors such as Zed; "
        "sessions are created and loaded by the client (--session/--continue/--no-session do not apply)",
    )
    tuning = parser.add_argument_group(
        "compaction and retries",
        "defaults come from $RPC_AGENT_HOME/settings.json, then <cwd>/.rpc-agent/settings.json "
        '(e.g. {"compaction": {"reserveTokens": 16384, "keepRecentTokens": 20000}, '
        '"retry": {"maxRetries": 3, "baseDelayMs": 2000}}); these flags override both',
    )
    for override in TUNING_OVERRIDES:
        override.add_to(tuning)
    host = parser.add_argument_group(
        "governing the agent",
        "approvals are asked of a client that declared them (JSON-RPC), or denied in --print mode; "
        'settings files may hold "approval", "allow"/"deny" rules such as "bash(npm test*)", "read", '
        '"edit(src/**)", "maxTurns", "maxBudgetUsd", "hookTimeoutSeconds", "approvalTimeoutSeconds"',
    )
    for override in HOST_OVERRIDES:
        override.add_to(host)
    host.add_argument("--system-prompt", metavar="TEXT", help="replace the system prompt")
    host.add_argument("--append-system-prompt", metavar="TEXT", help="add to the system prompt")
    host.add_argument("--tools", metavar="LIST", help="the built-in tools to offer, e.g. read,grep,find,ls")
    script = parser.add_argument_group("headless mode (scripts)")
    script.add_argument(
        "-p",
        "--print",
        dest="print_prompt",
        nargs="?",
        const="-",
        metavar="PROMPT",
        help="run one prompt in the cwd, print the final answer and exit (PROMPT '-' or none: read stdin); "
        "exit 0 done, 1 failed, 3 stopped by a limit",
    )
    script.add_argument(
        "--output-format",
        choices=["text", "json", "stream-json"],
        default="text",
        help="--print output: the final text, one JSON result object, or every event as a JSON line",
    )
    script.add_argument(
        "--output-schema",
        type=Path,
        metavar="FILE",
        help="--print: the final answer must match this JSON Schema (a file); it is printed as JSON "
        "(structuredOutput in --output-format json); exit 1 when the model never gives a matching one",
    )
    return parser


def overrides_from(args: argparse.Namespace) -> SettingsFile:
    """The settings the flags override, as a settings file would hold them."""
    from rpc_agent.agent.settings import SettingsFile

    given: dict[str, Any] = {}
    for override in (*TUNING_OVERRIDES, *HOST_OVERRIDES):
        value = override.given(args)
        if value is not None:
            *sections, key = override.key.split(".")
            section = given
            for name in sections:
                section = section.setdefault(name, {})
            section[key] = value
    return SettingsFile.model_validate(given)


def settings_given(args: argparse.Namespace) -> bool:
    """Whether a flag overrides a setting. Without one the overrides are an empty settings
    file, which changes nothing: a plain start skips them, as building them would be its first
    pydantic model, loading pydantic's schema machinery and plugin scan before the first answer."""
    return any(override.given(args) is not None for override in (*TUNING_OVERRIDES, *HOST_OVERRIDES))


def settings_from(args: argparse.Namespace, home: Path, cwd: Path) -> AgentSettings:
    from rpc_agent.agent.settings import load_settings, settings_paths

    overrides = overrides_from(args) if settings_given(args) else None
    settings = load_settings(settings_paths(home, cwd), overrides)
    from rpc_agent.agent.sandboxing import require_available

    require_available(settings.sandbox)  # never a silent run without the sandbox asked for
    return settings


def command() -> int:
    """The process's entry (the ``rpc-agent`` script and ``python -m rpc_agent``): ``main``
    with the command's process-wide measures (``rpc_agent.tuning``; ``main`` called on its
    own, as tests do, takes none)."""
    from rpc_agent.tuning import Tuning, wanted

    tuning = Tuning(wanted())
    tuning.start_up()
    try:
        code = main(started=tuning.started, opened=tuning.session_opened)
    finally:
        tuning.end()
    return tuning.leave(code)


def _output_schema(args: argparse.Namespace) -> JsonSchema | Literal[False] | None:
    """The --output-schema file read and checked before the run; False (said on stderr) when
    it cannot be used."""
    if args.output_schema is None:
        return None
    import orjson

    from rpc_agent.agent.structured import check_output_schema
    from rpc_agent.errors import InvalidRequestError

    where = f"rpc-agent: --output-schema {args.output_schema}"
    if args.print_prompt is None:
        print(f"{where}: applies to --print (-p) runs only", file=sys.stderr)
        return False
    try:
        schema = orjson.loads(args.output_schema.read_bytes())
        return check_output_schema(schema)
    except OSError as exc:
        print(f"{where}: cannot read it: {exc.strerror or exc}", file=sys.stderr)
    except orjson.JSONDecodeError as exc:
        print(f"{where}: not JSON: {exc}", file=sys.stderr)
    except InvalidRequestError as exc:
        print(f"{where}: {exc}", file=sys.stderr)
    return False


def _session_path_usable(path: Path) -> bool:
    """False (said on stderr, as a start-up failure is) when ``--session`` names something that
    is not a regular file: told before the agent's modules load; the store checks again when
    it opens the file. The ACP front opens the sessions its editor asks for, not this one."""
    from rpc_agent.errors import InvalidSessionFileError
    from rpc_agent.regular_files import check_session_path

    try:
        check_session_path(path.absolute())
    except InvalidSessionFileError as exc:
        print(f"rpc-agent: {exc}", file=sys.stderr)
        return False
    return True


def main(
    argv: Sequence[str] | None = None,
    *,
    started: Callable[[], None] | None = None,
    opened: Callable[[], None] | None = None,
) -> int:
    """Parse the flags and run what they ask for; ``started`` is called once the modules of
    what runs are loaded, before it runs, and ``opened`` each time an agent's session is
    opened or replaced."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["batch"]:
        if started is not None:
            started()
        from rpc_agent.batch.command import main as batch_main

        return batch_main(argv[1:])
    if argv[:1] == ["export"]:
        if started is not None:
            started()
        from rpc_agent.checkpoints.rewind import export_changes
        from rpc_agent.export.command import main as export_main

        return export_main(argv[1:], export_changes)
    if argv[:1] == ["rewind"]:
        if started is not None:
            started()
        from rpc_agent.checkpoints.rewind import main as rewind_main

        return rewind_main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command is not None:
        from rpc_agent import login
        from rpc_agent.store.files import agent_home as home_of_agent

        if args.command == "login":
            return login.login(home_of_agent())
        return login.logout(home_of_agent())
    cwd = (args.cwd or Path.cwd()).absolute()
    if not cwd.is_dir():
        reason = "does not exist" if not cwd.exists() else "is not a directory"
        print(
            f"rpc-agent: --cwd {cwd} {reason}; give the agent an existing folder to work in", file=sys.stderr
        )
        return 2
    if args.session is not None and not args.acp and not _session_path_usable(args.session):
        return 1
    from rpc_agent.errors import SettingsError
    from rpc_agent.runtime import ServerConfig
    from rpc_agent.server.app import run
    from rpc_agent.store.files import agent_home

    try:
        settings = settings_from(args, agent_home(), cwd)
    except SettingsError as exc:
        print(f"rpc-agent: {exc}", file=sys.stderr)
        return 2
    config = ServerConfig(
        cwd=cwd,
        settings=settings,
        session_dir=args.session_dir.absolute() if args.session_dir else None,
        tools=not args.no_tools,
        tool_names=[t.strip() for t in args.tools.split(",") if t.strip()]
        if args.tools is not None
        else None,
        **{name: getattr(args, name) for name in _FLAGS_AS_GIVEN},
        on_session_opened=opened,
    )
    output_schema = _output_schema(args)
    if output_schema is False:
        return 2
    if started is not None:
        started()
    if args.print_prompt is not None:
        from rpc_agent.headless import run as run_headless

        prompt = sys.stdin.read() if args.print_prompt == "-" else args.print_prompt
        try:
            return run_headless(config, prompt, args.output_format, output_schema or None)
        except KeyboardInterrupt:
            return 130
        except Exception as exc:
            print(f"rpc-agent: {exc}", file=sys.stderr)
            return 1
    try:
        if args.acp:
            from rpc_agent.acp import run as run_acp

            return run_acp(config)
        return run(config)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # startup failures: say what happened, on stderr
        print(f"rpc-agent: {str(exc) or type(exc).__name__}", file=sys.stderr)  # never an empty reason
        return 1
