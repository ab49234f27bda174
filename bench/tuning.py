"""The server with and without the ``rpc-agent`` command's process-wide measures
(``rpc_agent/tuning.py``): every benchmark that spawns the server measures both, in one run."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_tuning_option(parser: argparse.ArgumentParser) -> None:
    """``--tuning both|on|off``, for ``tunings``: a run with one setting takes half as long."""
    parser.add_argument(
        "--tuning",
        choices=["both", "on", "off"],
        default="both",
        help="measure the server with its process-wide measures (on), without (off), or both",
    )


def tunings(choice: str) -> tuple[bool, ...]:
    """The settings to measure, tuned first: ``both``, ``on`` or ``off``."""
    return {"both": (True, False), "on": (True,), "off": (False,)}[choice]


def server_env(home: Path, tuned: bool) -> dict[str, str]:
    """The environment a benchmark spawns the server with."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "RPC_AGENT_NO_TUNING")}
    env["RPC_AGENT_HOME"] = str(home)
    if not tuned:
        env["RPC_AGENT_NO_TUNING"] = "1"
    return env
