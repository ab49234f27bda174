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
from typing import TYPE_CHECKING, Literal

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
    tuning.add_argument("--no-auto-compaction", action="store_true", help="never compact on its own")
    tuning.add_argument(
        "--no-checkpoints",
        action="store_true",
        help="do not snapshot the working directory per entry (settings: checkpoints.enabled)",
    )
    tuning.add_argument(
        "--reserve-tokens", type=int, metavar="N", help="compact when context > window - N (16384)"
    )
    tuning.add_argument(
        "--keep-recent-tokens", type=int, metavar="N", help="keep about N recent tokens (20000)"
    )
    tuning.add_argument(
        "--no-auto-retry", action="store_true", help="do not retry overloaded/5xx/dropped calls"
    )
    tuning.add_argument("--max-retries", type=int, metavar="N", help="retries of a transient failure (3)")
    tuning.add_argument(
        "--retry-base-delay-ms", type=int, metavar="MS", help="first retry delay, doubling (2000)"
    )
    host = parser.add_argument_group(
        "governing the agent",
        "approvals are asked of a client that declared them (JSON-RPC), or denied in --print mode; "
        'settings files may hold "approval", "allow"/"deny" rules such as "bash(npm test*)", "read", '
        '"edit(src/**)", "maxTurns", "maxBudgetUsd", "hookTimeoutSeconds", "approvalTimeoutSeconds"',
    )
    host.add_argument(
        "--approval",
        choices=["never", "writes", "all"],
        help="which tool calls need approval (default: writes when the client declared approvals, else never)",
    )
    host.add_argument(
        "--max-turns", type=positive_int, metavar="N", help="stop a prompt's run after N model calls"
    )
    host.add_argument(
        "--max-budget-usd", type=positive_float, metavar="X", help="stop a prompt's run once it cost $X"
    )
    host.add_argument(
        "--sandbox",
        choices=["off", "read-only", "workspace-write"],
        help="run the agent's commands (bash, rg) in a bubblewrap sandbox: read-only writes only "
        "their own temp folder, workspace-write also the cwd; $RPC_AGENT_HOME and ~/.ssh, ~/.aws, "
        '~/.config/gcloud, ~/.netrc are hidden (default: off, or the settings\' "sandbox")',
    )
    host.add_argument(
        "--sandbox-network",
        choices=["allow", "deny"],
        help="network for sandboxed commands (default: deny once a sandbox mode is on)",
    )
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


def settings_from(args: argparse.Namespace, home: Path, cwd: Path) -> AgentSettings:
    from rpc_agent.agent.sandboxing import require_available
    from rpc_agent.agent.settings import load_settings, settings_paths

    settings = load_settings(settings_paths(home, cwd), flag_overrides(args))
    require_available(settings.sandbox)  # never a silent run without the sandbox asked for
    return settings


def flag_overrides(args: argparse.Namespace) -> SettingsFile | None:
    """The settings the flags give, checked as a settings file would be, or None when no flag
    gives one: applying an empty SettingsFile changes nothing, and building it would be the
    first pydantic model a plain start builds, which loads pydantic's schema machinery before
    the first answer."""
    no_compaction = False if args.no_auto_compaction else None
    no_retry = False if args.no_auto_retry else None
    no_checkpoints = False if getattr(args, "no_checkpoints", False) else None
    approval = getattr(args, "approval", None)
    max_turns, max_budget = getattr(args, "max_turns", None), getattr(args, "max_budget_usd", None)
    mode, network = getattr(args, "sandbox", None), getattr(args, "sandbox_network", None)
    given = (
        no_compaction,
        args.reserve_tokens,
        args.keep_recent_tokens,
        no_retry,
        args.max_retries,
        args.retry_base_delay_ms,
        no_checkpoints,
        approval,
        max_turns,
        max_budget,
        mode,
        network,
    )
    if all(value is None for value in given):
        return None
    from rpc_agent.agent.settings import CheckpointsFile, CompactionFile, RetryFile, SandboxFile, SettingsFile

    overrides = SettingsFile(
        compaction=CompactionFile(
            enabled=no_compaction, reserveTokens=args.reserve_tokens, keepRecentTokens=args.keep_recent_tokens
        ),
        retry=RetryFile(enabled=no_retry, maxRetries=args.max_retries, baseDelayMs=args.retry_base_delay_ms),
        checkpoints=CheckpointsFile(enabled=no_checkpoints),
        approval=approval,
        maxTurns=max_turns,
        maxBudgetUsd=max_budget,
    )
    if mode is not None or network is not None:
        overrides.sandbox = SandboxFile(mode=mode, network=network)
    return overrides


def command() -> int:
    """The process's entry (the ``rpc-agent`` script and ``python -m rpc_agent``): ``main``
    with the command's process-wide measures (``rpc_agent.tuning``; ``main`` called on its
    own, as tests do, takes none)."""
    from rpc_agent.tuning import Tuning, wanted

    tuning = Tuning(wanted())
    tuning.start_up()
    try:
        code = main(started=tuning.started)
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


def main(argv: Sequence[str] | None = None, *, started: Callable[[], None] | None = None) -> int:
    """Parse the flags and run what they ask for; ``started`` is called once the modules of
    what runs are loaded, before it runs."""
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
    from rpc_agent.errors import SettingsError
    from rpc_agent.runtime import ServerConfig
    from rpc_agent.server.app import run
    from rpc_agent.store.files import agent_home

    cwd = (args.cwd or Path.cwd()).absolute()
    if not cwd.is_dir():
        reason = "does not exist" if not cwd.exists() else "is not a directory"
        print(
            f"rpc-agent: --cwd {cwd} {reason}; give the agent an existing folder to work in", file=sys.stderr
        )
        return 2
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
