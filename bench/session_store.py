"""Session store benchmark: load, context, tree and durable appends, next to the reference agent.

Run from the project root::

    .venv/bin/python -m bench.session_store [--sizes 1000,10000,100000] [--baseline/--no-baseline]

What it does:

1. Writes synthetic, realistic v3 session files (``bench/.data/``, git-ignored): user messages,
   assistant messages with thinking, text and tool calls (usage with cost), tool results with
   multi-line output, a few branches (with and without ``branch_summary``), two compactions,
   labels, a model change, a thinking level change, a session name and a few extension
   entries. About 750 bytes per entry, so 100k entries make a 75 MB file. The files are
   deterministic (fixed seed) and reused when already there.
2. Times, median of several runs: ``SessionManager.open(path)`` + ``close()``, and the first
   ``build_session_context()`` and ``get_tree()`` after each open (so a cache in the manager
   does not hide the cost); then durable appends (each one awaited until fsynced), one at a
   time and from 64 concurrent tasks, with the fsync count.
3. With ``--baseline`` (default), and when ``node`` and ``npm`` exist, installs the reference
   implementation (``@mariozechner/pi-coding-agent``) into ``bench/.node/`` once and times its
   read + ``parseSessionEntries`` + ``migrateSessionEntries`` + ``buildSessionContext`` on the
   same files (``bench/pi_baseline.mjs``), then checks that both contexts hold the same
   messages. A baseline that cannot be installed or run is reported, never fatal.

This is a benchmark, not a test: nothing here fails on a slow number. ``--profile`` adds a
cProfile of the largest size's open+load and get_tree.

The parts: ``bench.synthetic`` writes the files, ``bench.appends`` times the appends,
``bench.pi_reference`` runs the reference agent; this module times the rest and reports.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.appends import AppendResult, measure_appends
from bench.pi_reference import (
    MatchResult,
    PiResult,
    compare_contexts,
    ensure_pi,
    node_version,
    pi_version,
    run_pi,
)
from bench.synthetic import DEFAULT_DATA_DIR, ensure_session_file
from rpc_agent.store import SessionManager

TARGET_LOAD_RATIO = 0.5
"""Open + build context of the largest session in at most this fraction of pi's time."""
TARGET_CONCURRENT_APPENDS = 30_000
"""Durable appends per second with 64 concurrent appenders."""


# --- measuring ------------------------------------------------------------------------------


def _open_and_close(path: Path) -> None:
    manager = SessionManager.open(path)
    manager.close()


@dataclass(slots=True)
class SizeRow:
    entries: int
    lines: int
    file_mb: float
    open_ms: float
    context_ms: float
    tree_ms: float
    context_messages: int
    tree_nodes: int
    pi: PiResult | None = None
    match: MatchResult | None = None

    @property
    def open_context_ms(self) -> float:
        return self.open_ms + self.context_ms


def measure_size(path: Path, entries: int, runs: int) -> tuple[SizeRow, SessionManager]:
    """Times for one file; returns the row and an open manager (for the baseline check).

    Each run opens the file, builds the context, builds the tree and closes: context and tree
    are timed on their first call after the open (the manager may cache them; a cached answer
    is not what is measured here), and open+load is the open plus the close.
    """
    open_samples: list[float] = []
    context_samples: list[float] = []
    tree_samples: list[float] = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        manager = SessionManager.open(path)
        opened = time.perf_counter()
        manager.build_session_context()
        built = time.perf_counter()
        manager.get_tree()
        treed = time.perf_counter()
        manager.close()
        closed = time.perf_counter()
        open_samples.append((opened - start + closed - treed) * 1000)
        context_samples.append((built - opened) * 1000)
        tree_samples.append((treed - built) * 1000)
    manager = SessionManager.open(path)
    row = SizeRow(
        entries=entries,
        lines=len(manager.entries) + 1,
        file_mb=path.stat().st_size / 1e6,
        open_ms=statistics.median(open_samples),
        context_ms=statistics.median(context_samples),
        tree_ms=statistics.median(tree_samples),
        context_messages=len(manager.build_session_context().messages),
        tree_nodes=len(manager.get_tree()),
    )
    return row, manager


# --- report ---------------------------------------------------------------------------------


@dataclass(slots=True)
class BenchReport:
    rows: list[SizeRow] = field(default_factory=list)
    appends: list[AppendResult] = field(default_factory=list)
    baseline_note: str | None = None
    pi_version: str | None = None
    load_average: float | None = None


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def join(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))])

    line = join(headers)
    rule = "  ".join("-" * w for w in widths)
    body = [join(r) for r in rows]
    return "\n".join([line, rule, *body])


def format_report(report: BenchReport, runs: int) -> str:
    out: list[str] = []
    out.append(f"Session store benchmark (Python {sys.version.split()[0]}, median of {runs} runs)")
    if report.load_average is not None:
        out.append(
            f"{os.cpu_count()} CPUs; load average at start {report.load_average:.2f} "
            "(other work on the machine skews wall-clock numbers)"
        )
    out.append("")
    out.append("(context and tree: their first call on a freshly opened session)")
    out.append("")
    out.append(
        _table(
            [
                "entries",
                "lines",
                "file MB",
                "open+load ms",
                "context ms",
                "tree ms",
                "open+ctx ms",
                "ctx msgs",
                "tree nodes",
            ],
            [
                [
                    f"{r.entries:,}",
                    f"{r.lines:,}",
                    f"{r.file_mb:.1f}",
                    f"{r.open_ms:.1f}",
                    f"{r.context_ms:.2f}",
                    f"{r.tree_ms:.1f}",
                    f"{r.open_context_ms:.1f}",
                    f"{r.context_messages:,}",
                    f"{r.tree_nodes:,}",
                ]
                for r in report.rows
            ],
        )
    )
    with_pi = [r for r in report.rows if r.pi is not None]
    out.append("")
    if with_pi:
        out.append(f"Reference: pi coding agent {report.pi_version or '?'} on node {node_version()}")
        out.append("  pi = readFileSync + parseSessionEntries + migrateSessionEntries + buildSessionContext")
        out.append("  (pi SessionManager.open+ctx and pi getTree shown for information only)")
        out.append("")
        table_rows: list[list[str]] = []
        for r in with_pi:
            assert r.pi is not None
            match = r.match
            table_rows.append(
                [
                    f"{r.entries:,}",
                    f"{r.open_context_ms:.1f}",
                    f"{r.pi.total_ms:.1f}",
                    f"{r.open_context_ms / r.pi.total_ms:.2f}" if r.pi.total_ms > 0 else "-",
                    f"{r.pi.load_ms:.1f}",
                    f"{r.pi.context_ms:.2f}",
                    f"{r.pi.open_ms:.1f}",
                    f"{r.pi.tree_ms:.1f}",
                    f"{r.context_messages:,}/{r.pi.messages:,}",
                    "-" if match is None else ("yes" if match.ok else _mismatch(match)),
                ]
            )
        out.append(
            _table(
                [
                    "entries",
                    "ours ms",
                    "pi ms",
                    "ours/pi",
                    "pi load ms",
                    "pi ctx ms",
                    "pi SM.open+ctx",
                    "pi tree ms",
                    "msgs ours/pi",
                    "match",
                ],
                table_rows,
            )
        )
    else:
        out.append(f"Reference: {report.baseline_note or 'not run'}")
    out.append("")
    out.append("Durable appends (each awaited until fdatasync'ed; ~750-byte toolResult line)")
    out.append("")
    out.append(
        _table(
            ["mode", "appends", "appends/s", "fsyncs", "appends/fsync"],
            [
                [
                    a.label,
                    f"{a.appends:,}",
                    f"{a.per_second:,.0f}",
                    f"{a.fsyncs:,}",
                    f"{a.appends / a.fsyncs:.1f}" if a.fsyncs else "-",
                ]
                for a in report.appends
            ],
        )
    )
    out.append("")
    out.append("Targets")
    largest = max(report.rows, key=lambda r: r.entries) if report.rows else None
    if largest is not None and largest.pi is not None and largest.pi.total_ms > 0:
        ratio = largest.open_context_ms / largest.pi.total_ms
        verdict = "MET" if ratio <= TARGET_LOAD_RATIO else "NOT MET"
        out.append(
            f"  open+build context of {largest.entries:,} entries <= {TARGET_LOAD_RATIO:.0%} of pi: "
            f"{largest.open_context_ms:.1f} ms vs {largest.pi.total_ms:.1f} ms = {ratio:.0%} -> {verdict}"
        )
    elif largest is not None:
        out.append(
            f"  open+build context of {largest.entries:,} entries <= {TARGET_LOAD_RATIO:.0%} of pi: "
            f"{largest.open_context_ms:.1f} ms, no baseline to compare with"
        )
    concurrent = [a for a in report.appends if a.label.startswith("concurrent")]
    for a in concurrent:
        verdict = "MET" if a.per_second >= TARGET_CONCURRENT_APPENDS else "NOT MET"
        out.append(
            f"  >= {TARGET_CONCURRENT_APPENDS:,} durable appends/s, {a.label}: {a.per_second:,.0f}/s -> {verdict}"
        )
    return "\n".join(out)


def _mismatch(match: MatchResult) -> str:
    parts = []
    if not match.count_equal:
        parts.append("count")
    if not match.messages_equal:
        parts.append("messages")
    if not match.settings_equal:
        parts.append("model/thinking")
    return "NO (" + ",".join(parts) + ")"


def _profile(path: Path, log: Callable[[str], None]) -> None:
    for label, setup in (("open+load", False), ("get_tree", True)):
        manager = SessionManager.open(path) if setup else None
        profiler = cProfile.Profile()
        gc.collect()
        if manager is not None:
            profiler.runcall(manager.get_tree)
            manager.close()
        else:
            profiler.runcall(_open_and_close, path)
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.sort_stats("tottime").print_stats(14)
        log(f"\n--- cProfile: {label} of {path.name} (sorted by own time) ---")
        log(stream.getvalue().strip())


# --- entry point ----------------------------------------------------------------------------


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of sizes: {text!r}") from None
    if not sizes or any(size < 10 for size in sizes):
        raise argparse.ArgumentTypeError("sizes must be at least 10 entries")
    return sizes


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_sizes, default=[1000, 10000, 100000], help="entries per session")
    parser.add_argument(
        "--baseline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compare with the reference agent (node); installs it into bench/.node once",
    )
    parser.add_argument("--runs", type=int, default=7, help="timed runs per measurement (median)")
    parser.add_argument("--append-runs", type=int, default=3, help="sessions per append measurement (median)")
    parser.add_argument("--sequential", type=int, default=500, help="appends in the sequential measurement")
    parser.add_argument("--tasks", type=int, default=64, help="concurrent appenders")
    parser.add_argument("--per-task", type=int, default=200, help="appends per concurrent appender")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="where session files go")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile open+load and get_tree of the largest size"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None, *, log: Callable[[str], None] = print) -> BenchReport:
    args = parse_args(argv)
    data_dir: Path = args.data_dir
    report = BenchReport(load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None)
    package: Path | None = None
    if args.baseline:
        package = ensure_pi(log)
        if package is None:
            report.baseline_note = "not available (see above)"
        else:
            report.pi_version = pi_version(package)
    else:
        report.baseline_note = "skipped (--no-baseline)"

    for entries in args.sizes:
        started = time.perf_counter()
        path = ensure_session_file(data_dir, entries)
        log(
            f"{path.name}: {path.stat().st_size / 1e6:.1f} MB ready in {time.perf_counter() - started:.1f} s; timing ..."
        )
        row, manager = measure_size(path, entries, args.runs)
        try:
            if package is not None:
                dump = data_dir / f"pi-context-{entries}.json"
                dump.unlink(missing_ok=True)
                row.pi = run_pi(package, path, args.runs, dump, log)
                if row.pi is not None:
                    row.match = compare_contexts(manager, row.pi)
                    dump.unlink(missing_ok=True)
        finally:
            manager.close()
        report.rows.append(row)

    log("durable appends ...")
    report.appends = measure_appends(data_dir, args.sequential, args.tasks, args.per_task, args.append_runs)
    if package is not None and all(r.pi is None for r in report.rows):
        report.baseline_note = "the node baseline failed for every size (see above)"
    log("")
    log(format_report(report, args.runs))
    if args.profile and args.sizes:
        _profile(ensure_session_file(data_dir, max(args.sizes)), log)
    return report


if __name__ == "__main__":
    main()
