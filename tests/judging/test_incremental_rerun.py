"""A rerun reads only the trial folders that changed or still need work."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from agentcredit import score
from agentcredit.store.run_store import RunStore
from tests.judging.synthetic import write_task, write_trials

loading = importlib.import_module("agentcredit.formats.load")  # the module, not load()


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Trial folders the run's trial stream reads (a skipped folder never is; the report
    still reads back the few trials it shows)."""
    offered: list[str] = []
    original = loading._Loader.try_record_folder

    def spy(self: object, folder: Path, names: set[str]) -> bool:
        if getattr(self, "finished", None) is not None and "result.json" in names:
            offered.append(folder.name)
        return original(self, folder, names)

    monkeypatch.setattr(loading._Loader, "try_record_folder", spy)
    return offered


def test_a_rerun_reads_only_what_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_task(tmp_path / "tasks")
    job = write_trials(tmp_path / "trials", 12, steps=3)
    out = tmp_path / "run"
    first = score(tmp_path / "tasks", tmp_path / "trials", out)
    before = (out / "scores.csv").read_text()
    made = {name: (out / name).stat().st_mtime_ns for name in ("scores.csv", "report.html")}
    offered = _reads(monkeypatch)

    again = score(tmp_path / "tasks", tmp_path / "trials", out)
    assert offered == []  # every folder finished and unchanged: none read again
    assert again.trials == first.trials == 12
    assert again.judged.resumed == 12
    assert (out / "scores.csv").read_text() == before
    # nothing in the store changed: the outputs made from it are not made again
    assert {name: (out / name).stat().st_mtime_ns for name in made} == made

    changed = sorted(job.iterdir())[3]
    result = changed / "result.json"
    stamp = result.stat().st_mtime_ns + 10**9
    os.utime(result, ns=(stamp, stamp))
    score(tmp_path / "tasks", tmp_path / "trials", out, fmt="jsonl")
    assert offered == [changed.name]  # the one folder written since is read again
    assert (out / "scores.jsonl").exists()  # another format asked: written


def test_a_trial_with_an_open_error_is_read_again(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_task(tmp_path / "tasks")
    job = write_trials(tmp_path / "trials", 4, steps=3)
    out = tmp_path / "run"
    score(tmp_path / "tasks", tmp_path / "trials", out)
    trial_id = sorted(job.iterdir())[1].name
    RunStore(out).add_error(trial_id, "judge", "model call failed: timeout")
    offered = _reads(monkeypatch)
    score(tmp_path / "tasks", tmp_path / "trials", out)
    assert offered == [trial_id]


def test_another_checklist_reads_every_trial_again(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    write_task(tmp_path / "tasks")
    write_trials(tmp_path / "trials", 3, steps=3)
    out = tmp_path / "run"
    score(tmp_path / "tasks", tmp_path / "trials", out)
    store = RunStore(out)
    store.db.execute("UPDATE trials SET checklist_hash = 'older'")
    offered = _reads(monkeypatch)
    score(tmp_path / "tasks", tmp_path / "trials", out)
    assert len(offered) == 3


def test_a_folder_named_in_no_encoding_is_skipped_too(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write_task(tmp_path / "tasks")
    job = write_trials(tmp_path / "trials", 2, steps=3)
    first = sorted(job.iterdir())[0]
    os.rename(os.fsencode(first), os.fsencode(first) + b"\xff\xfe")  # not UTF-8
    out = tmp_path / "run"
    assert score(tmp_path / "tasks", tmp_path / "trials", out).trials == 2
    offered = _reads(monkeypatch)
    assert score(tmp_path / "tasks", tmp_path / "trials", out).trials == 2
    assert offered == []


def test_a_report_made_again_shows_no_bookkeeping_in_its_provenance(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks")
    write_trials(tmp_path / "trials", 4, steps=3)
    score(tmp_path / "tasks", tmp_path / "trials", tmp_path / "run")
    assert "outputs_state" in RunStore(tmp_path / "run").meta()  # what a rerun compares
    score(tmp_path / "tasks", tmp_path / "trials", tmp_path / "run", fmt="jsonl")  # made again
    report = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "Provenance" in report and "outputs_state" not in report
