"""What the sandbox costs per ``bash`` call: off, bubblewrap, and (for the choice) Landlock.

Two measurements:

* ``spawn``: ``bash -c true`` started and waited for by ``subprocess`` as it is, wrapped in
  the bubblewrap command line the tool uses, and confined by Landlock in the child (a
  ``preexec_fn``, which also turns the spawn into fork+exec: the "off (fork)" row is that
  same path without the ruleset, the fair baseline for Landlock);
* ``tool``: the real ``bash`` tool (``BashTool.execute``) with no sandbox and with the
  workspace-write sandbox, network denied: what a model's call pays end to end.

Medians of ``--runs`` calls, and each one's ratio to ``off`` (Landlock's to ``off (fork+exec)``). Run:
``.venv/bin/python -m bench.sandbox [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from bench import landlock
from rpc_agent.sandbox import Sandbox, SandboxPolicy, bwrap
from rpc_agent.tools.base import ToolContext
from rpc_agent.tools.bash import BashTool


@dataclass
class Row:
    label: str
    median_ms: float
    ratio: float | None = None


def _time(call: Callable[[], object], runs: int) -> float:
    call()  # warm: page cache, bwrap's first user namespace
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def _spawn(argv: Sequence[str], cwd: Path, preexec: Callable[[], None] | None = None) -> None:
    subprocess.run(list(argv), cwd=cwd, check=True, preexec_fn=preexec, stdout=subprocess.DEVNULL)


def measure(runs: int, folder: Path) -> list[Row]:
    cwd, temp, home = folder / "work", folder / "temp", folder / "home"
    for path in (cwd, temp, home):
        path.mkdir(exist_ok=True)
    shell = ["/bin/bash", "-c", "true"]
    sandbox = Sandbox.build(
        SandboxPolicy("workspace-write", "deny", explicit=True),
        cwd=cwd,
        agent_home=home,
        home=None,
        temp_dir=temp,
    )
    rows = [Row("spawn: off", _time(lambda: _spawn(shell, cwd), runs))]
    rows.append(Row("spawn: off (fork+exec)", _time(lambda: _spawn(shell, cwd, lambda: None), runs)))
    if bwrap.unavailable_reason() is None:
        wrapped = bwrap.command(sandbox, shell, cwd)
        rows.append(Row("spawn: bubblewrap", _time(lambda: _spawn(wrapped, cwd), runs)))
    if landlock.abi_version() > 0:
        confine = landlock.restrictor([str(cwd), str(temp), "/dev"])
        rows.append(Row("spawn: landlock (fork+exec)", _time(lambda: _spawn(shell, cwd, confine), runs)))
    base = rows[0].median_ms
    fork_base = rows[1].median_ms
    for row in rows:
        row.ratio = row.median_ms / (fork_base if "landlock" in row.label else base)

    tool = BashTool()

    def call(box: Sandbox | None) -> None:
        ctx = ToolContext(cwd=cwd, tool_call_id="bench", sandbox=box)
        anyio.run(tool.execute, {"command": "true"}, ctx)

    tool_off = Row("tool: off", _time(lambda: call(None), runs), 1.0)
    rows.append(tool_off)
    if bwrap.unavailable_reason() is None:
        tool_box = _time(lambda: call(sandbox), runs)
        rows.append(Row("tool: bubblewrap", tool_box, tool_box / tool_off.median_ms))
    return rows


def main(argv: Sequence[str] | None = None, log: Callable[[str], None] = print) -> list[Row]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rpc-agent-bench-sandbox-") as folder:
        rows = measure(args.runs, Path(folder))
    log(
        f"per call, median of {args.runs} (landlock ABI {landlock.abi_version()}; {bwrap.unavailable_reason() or 'bubblewrap works'})"
    )
    log(f"{'':26} {'ms':>8} {'x off':>7}")
    for row in rows:
        ratio = f"{row.ratio:.2f}" if row.ratio is not None else ""
        log(f"{row.label:26} {row.median_ms:8.2f} {ratio:>7}")
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
