"""Big sessions over the wire, next to the reference agent: one table, seven rows.

    .venv/bin/python -m bench.tree_speed [--sizes 1000,10000,100000] [--runs 3] [--quick]

For each size, on the synthetic sessions of ``bench/session_store.py`` in the shape issue 13
measured (``branchy``: a branch every 500 entries, about half of the entries on the current
path, no compaction; 100,000 entries are 75 MB, 50,000 messages on the path), with pi 0.73.1
installed pinned into ``bench/.node``, in one run:

1. open + context: ``switch_session`` + ``get_messages`` over our stdio protocol, until the
   client has parsed both responses, against pi's in-process ``SessionManager.open`` +
   ``buildSessionContext()``; the messages must equal pi's, message for message;
2. ``get_tree`` (every node, in the compact ``format: "columns"``) over the wire, right after
   the open, against pi's in-process ``getTree()``; a note gives a later ``get_tree`` (an
   editor's refresh: the tree is kept) and the one-object-per-node shape;
3. ``get_entries`` (all) over the wire, against our own ``get_messages``; a note gives the
   two responses' sizes and when each line had been read, before the client's parse;
4. the slowest ``get_state`` / ``abort`` answer sent while a ``switch_session``, ``get_tree``
   or ``get_entries`` of that session is being served, against the 50 ms target;
5. resident memory of the server with the session open (after ``get_messages``), against
   pi's RPC process with the same session open the same way;
6. spawn -> first response, against pi's RPC mode (the same for every size);
7. fsynced appends per second: 64 concurrent appenders in-process (the same for every size),
   and a pipelined batch of ``set_label`` over the wire on the session (2,000 requests written
   at once, one line each, each answered once its line is fsynced), against 30,000/s.

The client over real pipes is ``bench/tree_wire.py``; what a size measures and the table
printed of it are ``bench/tree_table.py``.

Medians of ``--runs``. A benchmark, not a test: nothing fails on a slow number.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import orjson

from bench.appends import concurrent_run
from bench.pi_reference import ensure_pi, run_pi
from bench.synthetic import DEFAULT_DATA_DIR, ensure_session_file
from bench.tree_table import SizeResult, in_ms, ratio, table
from bench.tree_wire import Wire, ours, pi_cmd, pi_wire, rpc
from bench.tuning import add_tuning_option, tunings

COLUMNS = {"format": "columns"}
"""Row 2 asks for the tree in its compact shape: every node, every field, one list per field."""


def copies(source: Path, folder: Path, count: int) -> list[Path]:
    """Copies of a session whose header names an existing cwd (pi refuses any other)."""
    data = source.read_bytes()
    head, rest = data.split(b"\n", 1)
    header = orjson.loads(head)
    header["cwd"] = str(folder)
    fixed = orjson.dumps(header) + b"\n" + rest
    paths = []
    for i in range(count):
        path = folder / f"copy{i}-{source.name}"
        with path.open("wb") as handle:
            handle.write(fixed)
            handle.flush()
            os.fsync(handle.fileno())  # or the first fsynced append would pay for writing the copy
        paths.append(path)
    return paths


def measure_ours(
    result: SizeResult, paths: list[Path], home: Path, runs: int, pi_dump: Path | None, tuned: bool
) -> None:
    wire = ours(home, tuned=tuned)
    try:
        wire.send(rpc(0, "initialize"))
        wire.wait(0)
        opens: list[float] = []
        trees: list[float] = []
        entries: list[float] = []
        messages: list[float] = []
        blocked: list[tuple[float, str]] = []
        object_trees: list[float] = []
        refreshed: list[float] = []
        read: dict[str, list[tuple[float, int]]] = {"get_entries": [], "get_messages": []}
        last_messages: Any = None
        req = 1
        for run in range(runs):
            path = paths[run % len(paths)]
            # get_messages goes out once the switch is answered: sent with it, it would be
            # served at once from the session being left (requests run concurrently).
            sent = wire.send(rpc(req, "switch_session", {"sessionPath": str(path)}))
            time.sleep(0.005)
            probe = wire.send(rpc(req + 2, "get_state"))
            probe_at, _ = wire.wait(req + 2)
            _, switched = wire.wait(req)
            wire.send(rpc(req + 1, "get_messages"))
            done, reply = wire.wait(req + 1)
            if "error" in switched or "error" in reply:
                raise RuntimeError(
                    f"switch/get_messages failed: {switched.get('error') or reply.get('error')}"
                )
            opens.append((done - sent) * 1000)
            blocked.append(((probe_at - probe) * 1000, "switch_session"))
            last_messages = reply["result"]["messages"]
            if run == 0:
                result.rss_mb = wire.rss_mb()
            req += 3
            for method, params, samples in (
                ("get_tree", COLUMNS, trees),
                ("get_entries", None, entries),
                ("get_messages", None, messages),
                ("get_tree", None, object_trees),
                ("get_tree", COLUMNS, refreshed),
            ):
                sent = wire.send(rpc(req, method, params))
                time.sleep(0.005)
                probe = wire.send(rpc(req + 1, "abort" if run % 2 else "get_state"))
                probe_at, _ = wire.wait(req + 1)
                done, reply = wire.wait(req)
                samples.append((done - sent) * 1000)
                read_at, size = wire.lines.pop(req)
                if method in read:
                    read[method].append(((read_at - sent) * 1000, size))
                if method != "get_messages":
                    blocked.append(((probe_at - probe) * 1000, method))
                if params is COLUMNS and samples is trees:
                    result.nodes = len(reply["result"]["columns"]["id"])
                req += 2
        result.open_ms = statistics.median(opens)
        result.tree_ms = statistics.median(trees)
        result.entries_ms = statistics.median(entries)
        result.messages_ms = statistics.median(messages)
        result.notes.append(
            f"get_tree again, the tree kept since the first: {in_ms(statistics.median(refreshed))} "
            f"({ratio(statistics.median(refreshed), result.pi_tree_ms)} x pi's getTree()); "
            f"with one object per node (format nodes): {in_ms(statistics.median(object_trees))}"
        )
        (entries_read, entries_size), (messages_read, messages_size) = (
            (statistics.median(ms for ms, _ in read[m]), read[m][-1][1])
            for m in ("get_entries", "get_messages")
        )
        result.notes.append(
            f"get_entries / get_messages: {entries_size / 1e6:.1f} / {messages_size / 1e6:.1f} MB "
            f"({entries_size / messages_size:.2f}); their lines read (before the client's parse) after "
            f"{in_ms(entries_read)} / {in_ms(messages_read)} ({ratio(entries_read, messages_read)})"
        )
        result.blocked_ms, behind = max(blocked)
        result.notes.append(
            "get_state/abort behind each: "
            + ", ".join(f"{in_ms(ms)} ({name})" for ms, name in blocked)
            + f"; the slowest behind {behind}"
        )
        result.messages = len(last_messages)
        if pi_dump is not None and pi_dump.exists():
            result.matches_pi = orjson.loads(pi_dump.read_bytes())["messages"] == last_messages
        # Pipelined set_label: every request written at once, each answered once fsynced.
        ids = [node["id"] for node in wire.wait(_tree_probe(wire, req))[1]["result"]["nodes"][:200]]
        req += 1
        count = max(200, min(2000, len(ids) * 10))
        batch = [
            rpc(req + i, "set_label", {"entryId": ids[i % len(ids)], "label": f"l{i}"}) for i in range(count)
        ]
        # This client still holds the replies parsed above (at 100k, the messages and trees:
        # millions of objects in its young generations). Collected now, they are not walked by
        # a collection of this client's that the batch's small replies would set off, which
        # took most of the batch's time at 100k (a pause of the client, not of the server).
        gc.collect()
        sent = wire.send(*batch)
        last = 0.0
        for i in range(count):
            last, reply = wire.wait(req + i)
            if "error" in reply:
                raise RuntimeError(f"set_label failed: {reply['error']}")
        result.labels_per_s = count / (last - sent)
    finally:
        wire.close()


def _tree_probe(wire: Wire, req: int) -> int:
    wire.send(rpc(req, "get_tree", {"maxDepth": 300}))
    return req


def measure_pi_rss(result: SizeResult, package: Path, path: Path, home: Path) -> None:
    wire = pi_wire(package, home, path.parent)
    try:
        wire.send(pi_cmd("s", "switch_session", sessionPath=str(path)))
        _, reply = wire.wait("s")
        if not reply.get("success"):
            result.notes.append(f"pi switch_session failed: {str(reply.get('error'))[:80]}")
            return
        wire.send(pi_cmd("m", "get_messages"))
        wire.wait("m")
        result.pi_rss_mb = wire.rss_mb()
    finally:
        wire.close()


def startup(
    home: Path, package: Path | None, runs: int, tuned: bool, *, first_start: bool = True
) -> tuple[float, float]:
    """Median spawn-to-first-response over ``runs`` starts, after one more untimed one (it may
    still be writing byte-code caches) unless ``first_start`` is false: the smoke run's
    servers measured before it have written them."""
    ours_ms, pi_ms = [], []
    skip = 1 if first_start else 0
    for _ in range(runs + skip):
        wire = ours(home, tuned=tuned)
        wire.send(rpc(1, "initialize"))
        at, _ = wire.wait(1)
        ours_ms.append((at - wire.started) * 1000)
        wire.close()
        if package is not None:
            pw = pi_wire(package, home, home)
            pw.send(pi_cmd("1", "get_state"))
            at, _ = pw.wait("1")
            pi_ms.append((at - pw.started) * 1000)
            pw.close()
    return statistics.median(ours_ms[skip:]), statistics.median(pi_ms[skip:]) if pi_ms else float("nan")


def appends_in_process(folder: Path, tasks: int, per_task: int, runs: int) -> float:
    rates = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(dir=folder, prefix="appends-") as tmp:
            elapsed, _fsyncs = anyio.run(
                concurrent_run, Path(tmp), tasks, per_task, backend_options={"use_uvloop": True}
            )
        rates.append(tasks * per_task / elapsed)
    return float(statistics.median(rates))


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None, *, log: Callable[[str], None] = print) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_sizes, default=[1000, 10000, 100000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes, one run, no pi: a smoke test")
    parser.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    add_tuning_option(parser)
    args = parser.parse_args(argv)
    settings = tunings(args.tuning)
    if args.quick:
        args.sizes, args.runs, args.baseline = [100, 300], 1, False
    package = ensure_pi(log) if args.baseline else None
    with tempfile.TemporaryDirectory(prefix="tree-speed-") as tmp:
        work = Path(tmp)
        home = work / "home"
        home.mkdir()
        results: dict[bool, list[SizeResult]] = {tuned: [] for tuned in settings}
        for size in args.sizes:
            log(f"{size:,} entries ...")
            result = SizeResult(size)
            paths = copies(ensure_session_file(args.data_dir, size, branchy=True), work, 2)
            dump: Path | None = None
            if package is not None:
                dump = work / f"pi-{size}.json"
                pi = run_pi(package, paths[0], args.runs, dump, log)
                if pi is not None:
                    result.pi_open_ms, result.pi_tree_ms = pi.open_ms, pi.tree_ms
                measure_pi_rss(result, package, paths[1], home)
            for tuned in settings:  # the same files, one setting after the other
                ours_result = replace(result, notes=[])
                measure_ours(ours_result, paths, home, max(args.runs, 2), dump, tuned)
                results[tuned].append(ours_result)
            for path in paths:
                path.unlink()
        starts = {
            tuned: startup(home, package, args.runs, tuned, first_start=not args.quick) for tuned in settings
        }
        per_task = 40 if args.quick else 200
        appends = appends_in_process(work, 64, per_task, 1 if args.quick else args.runs)
    report = "\n\n".join(table(results[tuned], *starts[tuned], appends, tuned=tuned) for tuned in settings)
    log(report)
    return report


if __name__ == "__main__":
    main()
