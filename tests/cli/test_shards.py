"""Sharded runs: ``run --shard K/N`` on N machines (here: folders of one machine), merged
by ``agentcredit merge``, give the analysis of one unsharded run; a shard given twice or
judged another way is refused with its reason."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import agentcredit
from agentcredit.cli.app import app
from agentcredit.llm import register_script
from agentcredit.runs.shard import Shard
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge

runner = CliRunner()
MODEL = "scripted/shard-judge"


def _run(out: Path, *extra: str) -> None:
    result = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                 "--out", str(out), "--model", MODEL, "--workers", "1",
                                 *extra])
    assert result.exit_code == 0, result.output


def _analysis(run: Path, tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / f"{run.name}.json"
    result = runner.invoke(app, ["analyze", str(run), "--seed", "7", "--bootstrap", "300",
                                 "--json", str(path)])
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(path.read_text())
    found.pop("meta")  # where and when each run was made
    return found


def _refused(tmp_path: Path, *runs: Path) -> str:
    result = runner.invoke(app, ["merge", *map(str, runs), "--out", str(tmp_path / "no")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not (tmp_path / "no").exists()
    [line] = [x for x in result.output.splitlines() if x.startswith("error")]
    return line


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    register_script("shard-judge", scripted_judge.answer)
    tmp = tmp_path_factory.mktemp("shards")
    whole, one, two = tmp / "whole", tmp / "one", tmp / "two"
    _run(whole)
    _run(one, "--shard", "1/2")
    agentcredit.score(EXAMPLES / "tasks", EXAMPLES / "jobs", two, model=MODEL,
                      shard="2/2")  # the library call takes the same shard
    return {"whole": whole, "one": one, "two": two}


def test_two_shards_merged_give_the_analysis_of_one_run(shards: dict[str, Path],
                                                        tmp_path: Path) -> None:
    taken = [sum(Shard(k, 2).takes(t["trial_id"]) for t in _trials(shards["whole"]))
             for k in (1, 2)]
    assert all(taken) and sum(taken) == 8  # each shard judges a share; together all, once
    assert [len(_trials(shards[n])) for n in ("one", "two")] == taken
    merged = tmp_path / "merged"
    result = runner.invoke(app, ["merge", str(shards["one"]), str(shards["two"]), "--out",
                                 str(merged)])
    assert result.exit_code == 0, result.output
    assert "8 trials of shards 1/2, 2/2" in result.output
    whole = _analysis(shards["whole"], tmp_path)
    assert whole["discrimination"]["scorers"]["judge_only"]["n"] > 0  # the model judged
    assert _analysis(merged, tmp_path) == whole
    assert (merged / "report.html").exists()
    summary = json.loads((merged / "summary.json").read_text())
    assert summary == json.loads((shards["whole"] / "summary.json").read_text())
    assert summary["trials"] == 8


def test_a_shard_resumes_as_itself_and_only_as_itself(shards: dict[str, Path],
                                                      tmp_path: Path) -> None:
    copy = tmp_path / "one"
    shutil.copytree(shards["one"], copy)
    _run(copy, "--shard", "1/2")  # resumed: nothing new
    assert len(_trials(copy)) == len(_trials(shards["one"]))
    result = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                 "--out", str(copy), "--model", MODEL, "--shard", "2/2"])
    assert result.exit_code == 2 and "holds shard 1/2" in result.output
    bad = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                              "--out", str(tmp_path / "x"), "--shard", "3/2"])
    assert bad.exit_code == 2 and "--shard must be K/N" in bad.output


def test_a_duplicated_shard_is_refused(shards: dict[str, Path], tmp_path: Path) -> None:
    again = tmp_path / "again"
    shutil.copytree(shards["one"], again)
    assert "both shard 1/2" in _refused(tmp_path, shards["one"], again, shards["two"])
    assert "given twice" in _refused(tmp_path, shards["one"], shards["one"])
    whole_again = tmp_path / "whole-again"
    shutil.copytree(shards["whole"], whole_again)
    line = _refused(tmp_path, shards["whole"], whole_again)  # unsharded: the trials tell
    assert "is in another run given too" in line


def test_a_mismatched_shard_is_refused(shards: dict[str, Path], tmp_path: Path) -> None:
    assert "split differently" in _refused(tmp_path, shards["one"], shards["whole"])
    other_seed = tmp_path / "seed"
    runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                        str(other_seed), "--model", MODEL, "--shard", "2/2", "--seed", "5"])
    assert "seed is 5 but 0" in _refused(tmp_path, shards["one"], other_seed)
    edited = tmp_path / "edited"
    shutil.copytree(shards["two"], edited)
    with sqlite3.connect(edited / "run.sqlite") as db:
        db.execute("UPDATE trials SET checklist_hash = 'f' || checklist_hash")
    assert "shards must use the same checklists" in _refused(tmp_path, shards["one"], edited)


def _trials(run: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(run / "run.sqlite") as db:
        return [{"trial_id": t} for (t,) in db.execute("SELECT trial_id FROM trials")]
