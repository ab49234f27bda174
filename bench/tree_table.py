"""What ``bench.tree_speed`` measures for one session size, and the table it prints of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

BLOCK_TARGET_MS = 50.0
APPEND_TARGET = 30_000.0


@dataclass(slots=True)
class SizeResult:
    entries: int
    open_ms: float = float("nan")
    pi_open_ms: float = float("nan")
    tree_ms: float = float("nan")
    pi_tree_ms: float = float("nan")
    entries_ms: float = float("nan")
    messages_ms: float = float("nan")
    blocked_ms: float = float("nan")
    rss_mb: float = float("nan")
    pi_rss_mb: float = float("nan")
    labels_per_s: float = float("nan")
    nodes: int = 0
    messages: int = 0
    matches_pi: bool | None = None
    notes: list[str] = field(default_factory=list)


def in_ms(value: float) -> str:
    return "-" if value != value else (f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms")


def ratio(ours_value: float, theirs: float) -> str:
    if ours_value != ours_value or theirs != theirs or theirs == 0:
        return "-"
    return f"{ours_value / theirs:.2f}"


def table(
    results: list[SizeResult], start_ours: float, start_pi: float, appends: float, tuned: bool = True
) -> str:
    def cell(ours_text: str, theirs_text: str, ratio_text: str) -> str:
        return f"{ours_text} / {theirs_text} ({ratio_text})"

    rows: list[list[str]] = []

    def row(name: str, target: str, make: Callable[[SizeResult], str]) -> None:
        rows.append([name if tuned else f"(off) {name}", *(make(r) for r in results), target])

    row(
        "1. open + context (ours wire / pi in-process)",
        "≤ 0.5",
        lambda r: cell(in_ms(r.open_ms), in_ms(r.pi_open_ms), ratio(r.open_ms, r.pi_open_ms)),
    )
    row(
        "2. get_tree, all nodes (ours wire / pi getTree())",
        "≤ 1",
        lambda r: cell(in_ms(r.tree_ms), in_ms(r.pi_tree_ms), ratio(r.tree_ms, r.pi_tree_ms)),
    )
    row(
        "3. get_entries, all (ours / our get_messages)",
        "≤ 1",
        lambda r: cell(in_ms(r.entries_ms), in_ms(r.messages_ms), ratio(r.entries_ms, r.messages_ms)),
    )
    row(
        "4. slowest get_state/abort while busy (ours / target)",
        "≤ 1",
        lambda r: cell(in_ms(r.blocked_ms), in_ms(BLOCK_TARGET_MS), ratio(r.blocked_ms, BLOCK_TARGET_MS)),
    )
    row(
        "5. RSS, session open (ours / pi RPC)",
        "≤ 0.5",
        lambda r: cell(f"{r.rss_mb:.0f} MB", f"{r.pi_rss_mb:.0f} MB", ratio(r.rss_mb, r.pi_rss_mb)),
    )
    row(
        "6. spawn -> first response (ours / pi RPC)",
        "≤ 0.15",
        lambda _r: cell(in_ms(start_ours), in_ms(start_pi), ratio(start_ours, start_pi)),
    )
    row(
        "7. fsynced appends/s: 64 in-process; set_label batch over the wire (/ target)",
        "≥ 1",
        lambda r: (
            f"{appends:,.0f}; {r.labels_per_s:,.0f} / {APPEND_TARGET:,.0f} "
            f"({appends / APPEND_TARGET:.2f}; {r.labels_per_s / APPEND_TARGET:.2f})"
        ),
    )
    headers = [
        f"tuning {'on' if tuned else 'off'}: ours / theirs (ratio)",
        *(f"{r.entries:,} entries" for r in results),
        "target",
    ]
    widths = [max(len(h), *(len(x[i]) for x in rows)) for i, h in enumerate(headers)]

    def join(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    lines = [join(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [join(r) for r in rows]
    checks = ", ".join(
        f"{r.entries:,}: {r.messages:,} messages, {r.nodes:,} nodes, "
        + (
            "same as pi"
            if r.matches_pi
            else "NOT the same as pi"
            if r.matches_pi is False
            else "not compared"
        )
        for r in results
    )
    lines.append("")
    lines.append(f"contexts: {checks}")
    for r in results:
        lines += [f"note ({r.entries:,}): {n}" for n in r.notes]
    return "\n".join(lines)
