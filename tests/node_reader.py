"""A pi script kept running to read session files for the tests: starting node and loading pi's
modules costs about a second of CPU, reading a file a few milliseconds.

The script (``pi_context.mjs``, ``pi15/pi15_context.mjs``) run with ``-`` answers each path
written to its stdin with one JSON line, ``{"error": ...}`` when it could not read the file.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

JsonDict = dict[str, Any]


class NodeReader:
    """``node folder/script -`` started once; :meth:`read` asks it for files, in order."""

    def __init__(self, node: str, folder: Path, script: str, env: Mapping[str, str] | None = None) -> None:
        self.script = script
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (open as long as the reader: close())
        self._process = subprocess.Popen(
            [node, str(folder / script), "-"],
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            encoding="utf-8",  # what node writes and reads, whatever the locale
        )

    def read(self, *paths: str | Path) -> list[JsonDict]:
        """What the script printed for each of ``paths`` (an assertion fails on an error)."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None
        assert stdout is not None
        for path in paths:
            assert "\n" not in str(path)
            stdin.write(f"{path}\n")
        stdin.flush()
        answers: list[JsonDict] = []
        for path in paths:
            line = stdout.readline()
            assert line, f"{self.script} ended ({self._process.poll()}):\n{self._said()}"
            answer = json.loads(line)
            assert "error" not in answer, f"{self.script} could not read {path}:\n{answer['error']}"
            answers.append(answer)
        return answers

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            code = self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            code = self._process.wait()
        finally:
            assert self._process.stdout is not None
            self._process.stdout.close()
        said = self._said()
        self._stderr.close()
        assert code == 0, f"{self.script} exited with {code}:\n{said}"

    def _said(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")
