"""Issue 57: a fault of the machine during a run (a full disk, a folder it cannot write, an
endpoint that does not answer) ends in one line and a non-zero exit, with the stores intact
and a rerun that completes once the cause is gone."""

from __future__ import annotations

import errno
import sqlite3
import sys
from pathlib import Path

import pytest

from agentcredit.cli.app import main
from agentcredit.runs import lock
from agentcredit.store.run_store import RunStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _main(*args: str) -> int:
    old = sys.argv
    sys.argv = ["agentcredit", *args]
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        sys.argv = old
    return 0


def test_a_full_disk_is_one_line_and_the_rerun_completes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    calls = {"n": 0}
    real = RunStore.record_judgments

    def full(self: RunStore, *args: object, **kwargs: object) -> None:
        calls["n"] += 1
        if calls["n"] == 3:  # the disk fills after two trials were stored
            raise sqlite3.OperationalError("database or disk is full")
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(RunStore, "record_judgments", full)
    assert _main("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "is full" in err and "run the same command again" in err
    with sqlite3.connect(out / "run.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    monkeypatch.setattr(RunStore, "record_judgments", real)
    assert _main("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(out)) == 0
    assert (out / "scores.csv").read_text().count("\n") == 9  # a header and the 8 trials


def test_a_folder_it_cannot_write_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "run" / "run.lock"))

    monkeypatch.setattr(lock.RunLock, "__enter__", refused)
    code = _main("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                 str(tmp_path / "run"))
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "cannot write" in err and "--out" in err


def test_an_endpoint_that_does_not_answer_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    out = tmp_path / "run"
    assert _main("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(out),
                 "--model", "openai/batch-test", "--batch") == 0  # queued, nothing sent
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    capsys.readouterr()
    code = _main("batch", "submit", str(out), "--base-url", f"http://127.0.0.1:{port}/v1")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "did not answer" in err and "--base-url" in err
    with sqlite3.connect(out / "responses.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
