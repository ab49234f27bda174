"""The pi 0.73.1 compatibility tests' shared fixtures. They are written in ``pi_fixtures.py``,
which mypy checks: this file is left out of mypy (pyproject.toml), whose module names would
clash with ``tests/conftest.py`` in these folders without ``__init__.py``."""

from pi_fixtures import node as node
from pi_fixtures import pi_reader as pi_reader
