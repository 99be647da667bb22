"""Corrupted state and dead servers: one line naming the file (or server) and what to do,
exit status 2, no traceback, and the file left exactly as it was."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentcredit", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "COLUMNS": "300", **(env or {})})


def _one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout
    text = " ".join((done.stderr + done.stdout).split())
    for needle in needles:
        assert needle in text, done.stderr


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_run_store_is_one_line_and_left_intact(tmp_path: Path, damage: str) -> None:
    run = tmp_path / "run"
    assert _cli("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                str(run)).returncode == 0
    store = run / "run.sqlite"
    for extra in ("run.sqlite-wal", "run.sqlite-shm"):
        (run / extra).unlink(missing_ok=True)
    data = store.read_bytes()
    store.write_bytes(b"this is not a database at all\n" * 200 if damage == "garbage"
                      else data[:4096 + 100])
    before = store.read_bytes()
    for command in (["score", str(run)], ["report", str(run)],
                    ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(run)]):
        done = _cli(*command)
        if damage == "truncated" and done.returncode == 0:
            continue  # SQLite may still read a store cut after its schema pages
        _one_line_error(done, "run.sqlite", "left as it is", "move it aside")
    assert store.read_bytes() == before


def test_a_cache_path_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "cache-dir"
    folder.mkdir()
    done = _cli("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                str(tmp_path / "run"), "--model", "openai/m", "--cache", str(folder),
                env={"OPENAI_API_KEY": "k"})
    _one_line_error(done, "cache-dir is a folder, not a SQLite file")


def test_a_dead_embedding_server_is_one_line(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    assert _cli("skills", "import", *[str(p) for p in sorted((EXAMPLES / "skills").iterdir())],
                "--out", str(bank)).returncode == 0
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = _cli("skills", "retrieve", str(bank), str(EXAMPLES / "tasks"), "--embed",
                "openai/text-embedding-3-small", "--base-url", f"http://127.0.0.1:{port}/v1",
                "--cache", str(tmp_path / "emb.sqlite"), env={"OPENAI_API_KEY": "k"})
    assert done.returncode != 0
    assert "Traceback" not in done.stdout + done.stderr
    assert "connection" in (done.stdout + done.stderr).lower()
