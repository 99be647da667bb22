"""Issue 57: the run lock appears whole, a stale one is taken over by exactly one process,
and one that names no process is left alone with advice."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcredit.errors import ConfigError
from agentcredit.runs.lock import LOCK_NAME, RunLock


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _try(folder: str, results: multiprocessing.Queue,  # type: ignore[type-arg]
         release: Any = None) -> None:
    """Try the lock; a holder keeps it until ``release`` is set (every other try reported),
    so no try can come after the holder let go, however slowly the processes start."""
    try:
        with RunLock(Path(folder)):
            results.put("held")
            if release is not None:
                release.wait(60)
    except ConfigError:
        results.put("refused")


def test_a_stale_lock_is_taken_over_by_exactly_one_of_many(tmp_path: Path) -> None:
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": _dead_pid(), "since": 0}))
    results: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    context = multiprocessing.get_context("fork")
    release = context.Event()
    workers = [context.Process(target=_try, args=(str(tmp_path), results, release))
               for _ in range(8)]
    for worker in workers:
        worker.start()
    outcomes = sorted(results.get(timeout=120) for _ in workers)
    release.set()
    for worker in workers:
        worker.join(60)
    assert outcomes.count("held") == 1, outcomes
    assert not (tmp_path / LOCK_NAME).exists()  # released by its holder
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary file left behind


def test_the_lock_is_never_seen_without_its_holder(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real_link = os.link

    def link(source: str | Path, target: str | Path) -> None:
        seen.append(Path(source).read_text())  # what appears at the lock's path, at once
        real_link(source, target)

    monkeypatch.setattr(os, "link", link)
    with RunLock(tmp_path):
        assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    assert seen and json.loads(seen[0])["pid"] == os.getpid()


def test_a_live_holder_is_named_and_a_nameless_lock_is_left_alone(tmp_path: Path) -> None:
    with RunLock(tmp_path):
        holder = multiprocessing.get_context("fork")
        results: multiprocessing.Queue = holder.Queue()  # type: ignore[type-arg]
        other = holder.Process(target=_try, args=(str(tmp_path), results))
        other.start()
        other.join(20)
        assert results.get(timeout=5) == "refused"
    (tmp_path / LOCK_NAME).write_text("")
    with pytest.raises(ConfigError, match=r"names no process.*delete it"):
        RunLock(tmp_path).__enter__()
    assert (tmp_path / LOCK_NAME).exists()
