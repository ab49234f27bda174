"""The command line of the benchmarks that take counts: the module's docstring as ``--help``,
and one whole-number option for each count."""

from __future__ import annotations

import argparse

from bench.tuning import add_tuning_option


def parse_counts(
    doc: str | None, argv: list[str] | None, *, tuning: bool = False, **defaults: int
) -> argparse.Namespace:
    """``--name N`` for each of ``defaults`` (``tree_entries`` is spelled ``--tree-entries``);
    with ``tuning``, also ``--tuning both|on|off`` (see ``bench.tuning.tunings``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in defaults.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=default)
    if tuning:
        add_tuning_option(parser)
    return parser.parse_args(argv)
