"""The ACP tests' shared fixtures. They are written in ``acp_testlib.py``, which mypy checks:
this file is left out of mypy (pyproject.toml), whose module names would clash with
``tests/conftest.py`` in these folders without ``__init__.py``."""

from acp_testlib import world as world
