"""The reference implementation for the benchmarks: pi, installed once under ``bench/.node``
and run by ``bench/pi_baseline.mjs`` on the same files; its context checked against ours.

A baseline that cannot be installed or run is reported, never fatal.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from rpc_agent.store import SessionManager

JsonDict = dict[str, Any]

_BENCH_DIR = Path(__file__).resolve().parent
NODE_PREFIX = _BENCH_DIR / ".node"
PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
"""Pinned, as tests/compat pins it: a baseline that moves would make the ratios meaningless."""
PI_SCRIPT = _BENCH_DIR / "pi_baseline.mjs"


@dataclass(slots=True)
class PiResult:
    load_ms: float
    """read + parseSessionEntries + migrateSessionEntries"""
    context_ms: float
    total_ms: float
    """median of the read + parse + migrate + buildSessionContext runs (not the sum of medians)"""
    open_ms: float
    """SessionManager.open + buildSessionContext() (for reference)"""
    tree_ms: float
    messages: int
    thinking_level: str
    model: JsonDict | None
    dump: Path | None


@dataclass(slots=True)
class MatchResult:
    count_equal: bool
    messages_equal: bool
    settings_equal: bool

    @property
    def ok(self) -> bool:
        return self.count_equal and self.messages_equal and self.settings_equal


def _pi_package_dir() -> Path:
    return NODE_PREFIX / "node_modules" / PI_PACKAGE


def ensure_pi(log: Callable[[str], None]) -> Path | None:
    """The installed reference package, installing it once; None (and a note) when not possible."""
    package = _pi_package_dir()
    if (package / "package.json").exists():
        return package
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        log("baseline: node/npm not found, showing our numbers alone")
        return None
    log(f"baseline: installing {PI_PACKAGE} into {NODE_PREFIX} (once) ...")
    NODE_PREFIX.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(NODE_PREFIX),
                "--no-audit",
                "--no-fund",
                f"{PI_PACKAGE}@{PI_VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log(f"baseline: npm install failed ({exc}), showing our numbers alone")
        return None
    if done.returncode != 0 or not (package / "package.json").exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        log(f"baseline: npm install failed (exit {done.returncode}): {' | '.join(tail)}")
        log("baseline: showing our numbers alone")
        return None
    return package


def run_pi(package: Path, path: Path, runs: int, dump: Path, log: Callable[[str], None]) -> PiResult | None:
    node = shutil.which("node")
    if node is None:
        return None
    command = [
        node,
        "--expose-gc",
        str(PI_SCRIPT),
        "--package",
        str(package),
        "--file",
        str(path),
        "--runs",
        str(runs),
    ]
    command += ["--dump", str(dump)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log(f"baseline: node run failed for {path.name}: {exc}")
        return None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        log(f"baseline: node exited {done.returncode} for {path.name}: {' | '.join(tail)}")
        return None
    try:
        data = orjson.loads(done.stdout.strip().splitlines()[-1])
        return PiResult(
            load_ms=float(data["loadMs"]),
            context_ms=float(data["contextMs"]),
            total_ms=float(data["totalMs"]),
            open_ms=float(data["managerOpenContextMs"]),
            tree_ms=float(data["treeMs"]),
            messages=int(data["messages"]),
            thinking_level=str(data["thinkingLevel"]),
            model=data["model"],
            dump=dump if dump.exists() else None,
        )
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as exc:
        log(f"baseline: unreadable output from node for {path.name}: {exc}")
        return None


def compare_contexts(manager: SessionManager, pi: PiResult) -> MatchResult:
    ours = manager.build_session_context()
    messages_equal = False
    if pi.dump is not None:
        theirs = orjson.loads(pi.dump.read_bytes())
        messages_equal = theirs.get("messages") == ours.messages
    our_model = {"provider": ours.model.provider, "modelId": ours.model.modelId} if ours.model else None
    return MatchResult(
        count_equal=len(ours.messages) == pi.messages,
        messages_equal=messages_equal,
        settings_equal=pi.thinking_level == ours.thinkingLevel and pi.model == our_model,
    )


def node_version() -> str:
    node = shutil.which("node")
    if node is None:
        return "?"
    try:
        return subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def pi_version(package: Path) -> str | None:
    try:
        version = orjson.loads((package / "package.json").read_bytes()).get("version")
    except (OSError, orjson.JSONDecodeError):
        return None
    return str(version) if version else None
