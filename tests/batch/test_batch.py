"""``rpc-agent batch`` on local processes: many faux runs, and every way a task can fail.

The command runs in the test's process; each task is an ``rpc-agent -p`` command line scripted
with ``--faux-script``, a real child process where the process is the point (a crash, a timeout,
Ctrl-C) and run in the batch's thread where the batch's own logic is (``Batch.run_in_process``).
What a task does depends on its folder (``batch_testlib.script``), so one script makes a batch
where one task crashes, one hangs past its timeout, and others work.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from batch.batch_testlib import Batch, JsonDict, script, session_header
from proc_table import processes_running
from rpc_agent.batch.tasks import BatchTask
from rpc_agent.batch.worker import WorkerOptions, child_argv

WAIT = 60.0


@pytest.fixture
def batch(tmp_path: Path, agent_home: Path) -> Batch:
    return Batch(tmp_path)


def test_twenty_tasks_on_two_jobs_all_finish_with_their_sessions(batch: Batch) -> None:
    folder = batch.folder("work")
    batch.write_tasks([{"id": f"t{n:02d}", "prompt": f"task number {n}", "cwd": "work"} for n in range(20)])
    code, stderr = batch.run_in_process("--jobs", "2")
    assert code == 0, stderr
    results = batch.by_id()
    assert sorted(results) == [f"t{n:02d}" for n in range(20)]
    for n in range(20):
        line = results[f"t{n:02d}"]
        assert line["status"] == "done"
        assert line["result"]["text"] == f"Echo: task number {n}"
        assert line["durationMs"] >= 0
        session = line["sessionFile"]
        assert Path(session).parent == batch.sessions
        header = session_header(session)
        assert header["cwd"] == str(folder)
        assert session.endswith(f"_{header['id']}.jsonl")  # the name and the header agree
        assert line["result"]["sessionFile"] == session
    assert len(list(batch.sessions.glob("*.jsonl"))) == 20
    assert "finished" in stderr
    assert "20 done, 0 failed" in stderr


def test_a_crash_a_timeout_and_a_missing_ref_are_failed_results_beside_the_others(batch: Batch) -> None:
    batch.folder("fine")
    batch.folder("crashes", "crash-here")
    batch.folder("hangs", "hang-here")
    repo = make_repo(batch.root / "repo")
    batch.write_tasks(
        [
            {"id": "fine", "prompt": "go", "cwd": "fine"},
            {"id": "crash", "prompt": "go", "cwd": "crashes"},
            {"id": "hang", "prompt": "go", "cwd": "hangs", "timeoutSeconds": 2},
            {"id": "no-ref", "prompt": "go", "repo": "repo", "ref": "no-such-branch"},
            {"id": "ref", "prompt": "go", "repo": "repo", "ref": "feature"},
        ]
    )
    before = git_state(repo)
    code, stderr = batch.run("--jobs", "3", replies=script())
    assert code == 1, stderr
    results = batch.by_id()
    assert results["fine"]["status"] == "done"
    assert (batch.root / "fine" / "out.txt").read_text() == "worked\n"

    crash = results["crash"]
    assert crash["status"] == "failed"
    assert crash["reason"].startswith("crashed: killed by SIGKILL")
    assert crash["result"] is None
    assert session_header(crash["sessionFile"])["cwd"].endswith("crashes")  # the run got that far

    hang = results["hang"]
    assert hang["status"] == "failed"
    assert hang["reason"] == "timed out after 2 s"
    assert processes_running("sleep 31.4159") == []  # the timeout stopped what the run started

    missing = results["no-ref"]
    assert missing["status"] == "failed"
    assert missing["reason"] == f"ref 'no-such-branch' not found in {repo}"

    checked_out = results["ref"]
    assert checked_out["status"] == "done", checked_out
    assert checked_out["commit"] == git(repo, "rev-parse", "feature")
    header = session_header(checked_out["sessionFile"])
    assert not Path(header["cwd"]).exists()  # the checkout is gone with the task
    assert git_state(repo) == before  # the repository itself was only read
    assert "2 done, 3 failed" in stderr


def test_a_rerun_skips_what_is_done_and_drops_a_line_cut_short(batch: Batch) -> None:
    batch.folder("w")
    first: list[JsonDict] = [{"id": f"a{n}", "prompt": f"first {n}", "cwd": "w"} for n in range(3)]
    batch.write_tasks(first)
    assert batch.run_in_process("--jobs", "2")[0] == 0
    with batch.results_file.open("ab") as out:
        out.write(b'{"id": "b0", "status": "do')  # a hard stop in the middle of a line
    batch.write_tasks(
        [
            *first,
            {"id": "b0", "prompt": "second 0", "cwd": "w"},
            {"id": "b1", "prompt": "second 1", "cwd": "w"},
        ]
    )
    code, stderr = batch.run_in_process("--jobs", "2")
    assert code == 0, stderr
    ids = [result["id"] for result in batch.results()]
    assert sorted(ids[:3]) == ["a0", "a1", "a2"]
    assert sorted(ids[3:]) == ["b0", "b1"]
    assert "3 task(s) already in the results, skipped" in stderr
    again = batch.run_in_process("--jobs", "2")
    assert again[0] == 0
    assert len(batch.results()) == 5  # nothing left to run
    assert len(list(batch.sessions.glob("*.jsonl"))) == 5


def test_retry_failed_runs_only_the_failed_tasks_again(batch: Batch) -> None:
    batch.folder("w")
    batch.write_tasks(
        [{"id": "ok", "prompt": "go", "cwd": "w"}, {"id": "flaky", "prompt": "go", "cwd": "flaky"}]
    )
    assert batch.run_in_process(replies=script())[0] == 1  # no folder "flaky" yet: that run fails
    batch.folder("flaky")
    assert batch.run_in_process(replies=script())[0] == 0  # the failure has a result: skipped too
    assert len(batch.results()) == 2
    code, stderr = batch.run_in_process("--retry-failed", replies=script())
    assert code == 0, stderr
    assert [(r["id"], r["status"]) for r in batch.results()] == [
        *[(r["id"], r["status"]) for r in batch.results()[:2]],
        ("flaky", "done"),
    ]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"id": "x", "prompt": "p"}', "line 2: (task): Value error, give either cwd or repo"),
        (
            '{"id": "x", "prompt": "p", "repo": "r"}',
            "line 2: (task): Value error, a task with a repo needs a ref",
        ),
        ('{"id": "a", "prompt": "p", "cwd": "."}', "line 2: the id 'a' is already used"),
        (
            '{"id": "x", "prompt": "p", "cwd": ".", "colour": 1}',
            "line 2: colour: Extra inputs are not permitted",
        ),
        ("{oops", "line 2: not JSON"),
        ('{"id": "x", "prompt": "p", "cwd": ".", "sandbox": "strict"}', "line 2: sandbox: Input should be"),
        (
            '{"id": "x", "prompt": "p", "cwd": ".", "outputSchema": {"type": 3}}',
            "task 'x': the output schema",
        ),
    ],
)
def test_a_bad_task_line_is_refused_before_anything_runs(batch: Batch, line: str, said: str) -> None:
    batch.tasks_file.write_text('{"id": "a", "prompt": "p", "cwd": "."}\n' + line + "\n")
    code, stderr = batch.run()
    assert code == 2
    assert said in stderr
    assert not batch.results_file.exists()


def test_a_second_batch_on_the_same_results_file_is_refused(batch: Batch) -> None:
    batch.folder("w")
    batch.write_tasks([{"id": "a", "prompt": "p", "cwd": "w"}])
    batch.results_file.write_text("")
    with batch.results_file.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the batch writing it holds it
        code, stderr = batch.run()
    assert code == 2
    assert "another rpc-agent batch is writing it" in stderr
    assert batch.results_file.read_text() == ""
    assert batch.run_in_process()[0] == 0  # once it is free


def test_tasks_carry_their_limits_and_output_schema_to_the_run(batch: Batch) -> None:
    batch.folder("w")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    replies: list[JsonDict] = [{"toolCalls": [{"name": "structured_output", "arguments": {"n": 7}}]}]
    batch.write_tasks(
        [
            {"id": "schema", "prompt": "n?", "cwd": "w", "outputSchema": schema},
            {"id": "limited", "prompt": "n?", "cwd": "w", "maxTurns": 1, "outputSchema": {"type": "string"}},
        ]
    )
    code, _stderr = batch.run_in_process(replies=replies)
    assert code == 1
    results = batch.by_id()
    assert results["schema"]["result"]["structuredOutput"] == {"n": 7}
    limited = results["limited"]
    assert limited["status"] == "failed"
    assert limited["exitCode"] == 3
    assert limited["reason"].startswith("max_turns: ")


def test_ctrl_c_stops_the_children_and_leaves_a_valid_results_file(batch: Batch, tmp_path: Path) -> None:
    batch.folder("w")
    batch.folder("slow", "hang-here")
    tasks: list[JsonDict] = [{"id": "quick", "prompt": "go", "cwd": "w"}]
    tasks += [{"id": f"slow{n}", "prompt": "go", "cwd": "slow"} for n in range(4)]
    batch.write_tasks(tasks)
    argv = batch.argv("--jobs", "2", replies=script(sleep="27.1828"))
    env = {**os.environ, "RPC_AGENT_HOME": str(tmp_path / "agent-home")}
    child = subprocess.Popen(
        [sys.executable, "-m", "rpc_agent", *argv], env=env, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + WAIT
    while len(processes_running("sleep 27.1828")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # both slots busy with hanging runs
    assert len(processes_running("sleep 27.1828")) >= 1
    child.send_signal(signal.SIGINT)
    _out, stderr = child.communicate(timeout=WAIT)
    assert child.returncode == 130, stderr
    assert "interrupted" in stderr
    assert processes_running("sleep 27.1828") == []
    lines = batch.results_file.read_text().splitlines() if batch.results_file.exists() else []
    results = [json.loads(line) for line in lines]  # every line whole
    assert all(r["id"] == "quick" or r["id"].startswith("slow") for r in results)
    assert not any(r["id"].startswith("slow") for r in results)  # an interrupted task has no result
    for session in batch.sessions.glob("*.jsonl"):  # stopped runs left valid session files
        for line in session.read_text().splitlines():
            json.loads(line)


def test_a_kept_checkout_is_the_ref_and_the_run_worked_in_it(batch: Batch) -> None:
    repo = make_repo(batch.root / "repo")
    git(repo, "checkout", "-q", "feature")
    (repo / "only-on-feature.txt").write_text("feature\n")
    git(repo, "add", "only-on-feature.txt")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "on feature")
    git(repo, "checkout", "-q", "main")
    big = "x" * 200_000  # more than one argv string may hold: the prompt goes over stdin
    batch.write_tasks([{"id": "kept", "prompt": big, "repo": "repo", "ref": "feature"}])
    checkouts = batch.root / "checkouts"
    code, stderr = batch.run_in_process(
        "--keep-checkouts", "--checkouts-dir", str(checkouts), replies=script()
    )
    assert code == 0, stderr
    (line,) = batch.results()
    folder = Path(line["checkout"])
    assert folder.is_relative_to(checkouts)
    assert (folder / "only-on-feature.txt").read_text() == "feature\n"
    assert (folder / "out.txt").read_text() == "worked\n"  # the agent's bash ran there
    assert session_header(line["sessionFile"])["cwd"] == str(folder)
    assert git(folder, "status", "--porcelain") == "?? out.txt"
    assert not (repo / "out.txt").exists()
    _header, *entries = (json.loads(x) for x in Path(line["sessionFile"]).read_text().splitlines())
    first_message = next(e for e in entries if e["type"] == "message")
    assert first_message["message"]["content"] == big


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_task_s_sandbox_applies_to_its_run(batch: Batch) -> None:
    boxed, free = batch.folder("boxed"), batch.folder("free")
    batch.write_tasks(
        [
            {"id": "boxed", "prompt": "go", "cwd": "boxed", "sandbox": "read-only"},
            {"id": "free", "prompt": "go", "cwd": "free"},
        ]
    )
    code, stderr = batch.run_in_process(replies=script())
    assert code == 0, stderr
    assert not (boxed / "out.txt").exists()  # the run's bash could not write its folder
    assert (free / "out.txt").read_text() == "worked\n"
    session = Path(batch.by_id()["boxed"]["sessionFile"]).read_text()
    assert "Read-only file system" in session


def test_a_sandbox_is_passed_to_the_run_only_when_the_task_names_one(tmp_path: Path) -> None:
    options = WorkerOptions(provider="faux")
    plain = BatchTask(id="a", prompt="p", cwd=str(tmp_path))
    boxed = BatchTask(id="b", prompt="p", cwd=str(tmp_path), sandbox="read-only")
    session = tmp_path / "s.jsonl"
    assert "--sandbox" not in child_argv(plain, options, tmp_path, session, None)
    argv = child_argv(boxed, options, tmp_path, session, None)
    assert argv[argv.index("--sandbox") + 1] == "read-only"


# --- a repository to check out ------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(path: Path) -> Path:
    path.mkdir()
    env = ("-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main")
    subprocess.run(["git", *env, "init", "-q", str(path)], check=True)
    (path / "a.txt").write_text("a\n")
    git(path, "add", "a.txt")
    git(path, *env, "commit", "-q", "-m", "first")
    git(path, "branch", "feature")
    (path / "a.txt").write_text("changed, not committed\n")  # a dirty working tree stays dirty
    return path


def git_state(repo: Path) -> tuple[str, str, list[str]]:
    worktrees = sorted(p.name for p in (repo / ".git").iterdir())
    return git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"), worktrees
