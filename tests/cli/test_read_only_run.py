"""Issue 57: read-only commands work on a finished run folder they cannot write (a read-only
bind mount), and a command that must write says so in one line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _agentcredit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentcredit", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def read_only_run(tmp_path: Path) -> Iterator[Path]:
    """A finished run, seen through a read-only bind mount (skips where mounting is not
    allowed)."""
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    made = _agentcredit("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                        str(tmp_path / "run"))
    assert made.returncode == 0, made.stderr
    view = tmp_path / "view"
    view.mkdir()
    bound = subprocess.run(["mount", "--bind", str(tmp_path / "run"), str(view)],
                           capture_output=True)
    if bound.returncode != 0:
        pytest.skip("bind mounts are not allowed here")
    try:
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(view)],
                          capture_output=True).returncode != 0:
            pytest.skip("read-only remounts are not allowed here")
        yield view
    finally:
        subprocess.run(["umount", str(view)], capture_output=True)


def test_read_only_commands_work_and_writing_ones_say_why(read_only_run: Path,
                                                          tmp_path: Path) -> None:
    report = _agentcredit("report", str(read_only_run), "--out", str(tmp_path / "r.html"))
    assert report.returncode == 0 and (tmp_path / "r.html").exists(), report.stderr
    scored = _agentcredit("score", str(read_only_run), "--out", str(tmp_path / "scores"))
    assert scored.returncode == 0 and (tmp_path / "scores" / "scores.csv").exists()
    assert _agentcredit("analyze", str(read_only_run)).returncode == 0
    for args in (("score", str(read_only_run)),
                 ("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                  str(read_only_run))):
        refused = _agentcredit(*args)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert "cannot write" in refused.stderr and "--out" in refused.stderr
