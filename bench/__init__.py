"""Benchmarks that print numbers: run ``python -m bench.<name>`` from the repository root
(``--help`` on each). A package, so that tests import them without path tricks."""
