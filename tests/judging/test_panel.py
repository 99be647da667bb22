"""Issue 59: several judges and samples in one run, agreement a reviewer can check, the
items where the judges split, and the judge against a person's labels."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from agentcredit.analysis.analyze import analyze_store
from agentcredit.cli.app import app
from agentcredit.llm import ModelSpec, register_script
from agentcredit.runs.pipeline import score
from agentcredit.store.run_store import RunStore
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge

runner = CliRunner()
FLIPPED = {"C1", "C3"}  # the items the second judge always answers the other way


def _agrees(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    return scripted_judge.answer(messages, schema)


def _flips(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    answer = scripted_judge.answer(messages, schema)
    if (schema or {}).get("title") != "ItemsAnswer":
        return answer
    parsed = json.loads(answer)
    for item in parsed["items"]:
        if item["item_id"] in FLIPPED and item["label"] in ("yes", "no"):
            item["label"] = "no" if item["label"] == "yes" else "yes"
    return json.dumps(parsed)


@pytest.fixture(scope="module")
def panel_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    register_script("panel-a", _agrees)
    register_script("panel-b", _flips)
    out = tmp_path_factory.mktemp("panel") / "run"
    spec = ModelSpec("scripted/panel-a", judges=("scripted/panel-a", "scripted/panel-b"),
                     samples=2)
    result = score(EXAMPLES / "tasks", EXAMPLES / "jobs", out, model=spec)
    assert result.judged.judged == 8
    assert set(result.judge_usage) == {"scripted/panel-a", "scripted/panel-b"}
    assert result.judge_usage["scripted/panel-b"]["calls"] == 8 * 2  # one per sample
    return out


def test_every_vote_and_the_majority_are_written(panel_run: Path) -> None:
    store = RunStore(panel_run)
    votes = list(store.votes())
    items = {(t, i) for t, i, *_ in votes}
    assert len(votes) == 4 * len(items)  # 2 judges x 2 samples per item
    rows = [json.loads(line) for line in (panel_run / "judgments.jsonl").read_text()
            .splitlines()]
    llm = [r for r in rows if r["source"] == "llm"]
    assert llm and all(len(r["votes"]) == 4 for r in llm)
    for row in llm:
        decided = [v["label"] for v in row["votes"] if v["label"] in ("yes", "no")]
        if decided.count("yes") == decided.count("no") and decided:
            assert (row["label"], row["reason"]) == ("abstain", "split_vote")
        elif decided:
            assert row["label"] == max(set(decided), key=decided.count)
            assert row["evidence"]  # the agreeing vote's quote
    assert store.meta()["judge_panel"] == "scripted/panel-a,scripted/panel-b×2"


def test_a_rerun_asks_nothing_new(panel_run: Path) -> None:
    spec = ModelSpec("scripted/panel-a", judges=("scripted/panel-a", "scripted/panel-b"),
                     samples=2)
    again = score(EXAMPLES / "tasks", EXAMPLES / "jobs", panel_run, model=spec)
    assert again.judged.resumed == 8 and again.judged.judged == 0
    assert again.usage is not None and again.usage["calls"] == 0
    assert all(u["calls"] == 0 for u in again.judge_usage.values())


def test_alpha_between_judges_is_the_reference_implementations(panel_run: Path) -> None:
    import krippendorff

    store = RunStore(panel_run)
    first = {(t, i, j): v.label for t, i, j, s, v in store.votes() if s == 0}
    units = sorted({(t, i) for t, i, _ in first})
    codes = {"yes": 1.0, "no": 0.0, "abstain": 2.0}
    data = np.array([[codes[first[(t, i, j)]] for t, i in units]
                     for j in ("scripted/panel-a", "scripted/panel-b")])
    reference = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    panel = analyze_store(store, draws=50)["panel"]
    alpha = panel["alpha"]["between_judges"]
    assert alpha["yes_no_abstain"]["estimate"] == pytest.approx(reference)
    agree = sum(first[(t, i, "scripted/panel-a")] == first[(t, i, "scripted/panel-b")]
                for t, i in units) / len(units)
    assert agree < 1.0 and alpha["yes_no_abstain"]["estimate"] < 1.0
    ci = alpha["yes_no_abstain"]
    assert ci["ci_low"] <= ci["estimate"] <= ci["ci_high"]
    assert panel["alpha"]["between_samples"]["scripted/panel-b"]["yes_no"]["estimate"] == 1.0
    assert set(panel["per_judge"]) == {"majority", "scripted/panel-a", "scripted/panel-b"}
    assert {s["item_id"] for s in panel["split_items"]} <= FLIPPED


def test_the_report_lists_split_items_with_both_quotes(panel_run: Path, tmp_path: Path) -> None:
    out = runner.invoke(app, ["report", str(panel_run), "--out", str(tmp_path / "r.html"),
                              "--bootstrap", "50"])
    assert out.exit_code == 0, out.output
    html = (tmp_path / "r.html").read_text()
    assert "Items where the judges split" in html
    assert html.count("scripted/panel-b</td>") >= 2 and "Krippendorff" in html


def test_analyze_labels_prints_dev_and_test(panel_run: Path, tmp_path: Path) -> None:
    out = runner.invoke(app, ["analyze", str(panel_run), "--labels",
                              str(EXAMPLES / "labels.csv"), "--bootstrap", "50", "--json",
                              str(tmp_path / "a.json")], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "dev (" in out.output and "test (" in out.output and "balanced accuracy" in out.output
    labels = json.loads((tmp_path / "a.json").read_text())["labels"]
    assert labels["labels"] == 31 and set(labels["splits"]) == {"dev", "test", "all"}
    raters = labels["splits"]["all"]["raters"]
    assert set(raters) == {"run", "scripted/panel-a", "scripted/panel-b"}
    assert raters["run"]["n"] == 31


def test_the_cli_takes_judges_and_samples(tmp_path: Path) -> None:
    register_script("panel-a", _agrees)
    register_script("panel-b", _flips)
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                              "--out", str(tmp_path), "--model", "scripted/panel-a",
                              "--judges", "scripted/panel-a,scripted/panel-b",
                              "--samples", "2"])
    assert out.exit_code == 0, out.output
    assert "judge scripted/panel-b: model requests sent 16" in " ".join(out.output.split())
    with (tmp_path / "scores.csv").open() as fh:
        assert {r["judge_model"] for r in csv.DictReader(fh)} == {
            "scripted/panel-a,scripted/panel-b×2"}
    refused = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                  "--out", str(tmp_path / "x"), "--samples", "2"])
    assert refused.exit_code != 0 and "--model" in refused.output


def test_checklists_show_prints_each_items_split_rate(panel_run: Path) -> None:
    checklist = next((panel_run / "checklists").glob("log-error-filter*.json"))
    out = runner.invoke(app, ["checklists", "show", str(checklist), "--run", str(panel_run)],
                        env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "split votes" in out.output and "/3" in out.output  # three trials of the task


def test_analyze_labels_takes_per_trial_scores(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                               str(run)]).exit_code == 0
    scores = tmp_path / "scores.csv"  # a person's progress scores, higher = further
    scores.write_text("trial_id,score\ncsv-sales-summary__Qm4tR2a,1.0\n"
                      "csv-sales-summary__Lx9pV3c,0.7\njson-config-migrate__Pa3eK7u,1.0\n"
                      "json-config-migrate__Rw8jN4s,0.5\nlog-error-filter__Bf7kW1e,0.1\n"
                      "log-error-filter__Hs2nD8q,1.0\nlog-error-filter__Zc5mY0t,0.6\n")
    out = runner.invoke(app, ["analyze", str(run), "--labels", str(scores), "--bootstrap", "50",
                              "--json", str(tmp_path / "a.json")], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "trial scores" in out.output and "test (" in out.output
    result = json.loads((tmp_path / "a.json").read_text())["labels"]
    assert result["splits"]["all"]["scorers"]["partial_credit"]["spearman"] > 0.9
    bad = tmp_path / "bad.csv"
    bad.write_text("trial_id,score\ncsv-sales-summary__Qm4tR2a,high\n")
    refused = runner.invoke(app, ["analyze", str(run), "--labels", str(bad)])
    assert refused.exit_code != 0 and "line 2" in refused.output
